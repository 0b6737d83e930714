//! A `libduckdb.so` loaded at run time through DuckDB's C API: the few
//! functions lancet calls, looked up by name when the file is loaded, so
//! that any build (a release from the npm registry's
//! `@duckdb/node-bindings-linux-x64`, a developer's own) runs with the same
//! lancet binary, and `bisect` can walk a ladder of releases.
//!
//! Only functions every release since 1.1 exports are required; the error
//! type (`duckdb_result_error_type`) is optional, and without it the type
//! is read from the message's `<Type> Error:` prefix, which DuckDB writes
//! from the same enum.

use anyhow::Context;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `duckdb_database`, `duckdb_connection`, `duckdb_config`: opaque handles.
pub(crate) type Handle = *mut c_void;
/// `idx_t`.
pub(crate) type Idx = u64;
/// `duckdb_state`: 0 success, 1 error.
pub(crate) type State = i32;

/// `duckdb_result`, as the C API lays it out (its fields are deprecated:
/// only the accessor functions read them).
#[repr(C)]
pub(crate) struct RawResult {
    deprecated_column_count: Idx,
    deprecated_row_count: Idx,
    deprecated_rows_changed: Idx,
    deprecated_columns: *mut c_void,
    deprecated_error_message: *mut c_char,
    internal_data: *mut c_void,
}

impl RawResult {
    pub(crate) fn empty() -> RawResult {
        RawResult {
            deprecated_column_count: 0,
            deprecated_row_count: 0,
            deprecated_rows_changed: 0,
            deprecated_columns: std::ptr::null_mut(),
            deprecated_error_message: std::ptr::null_mut(),
            internal_data: std::ptr::null_mut(),
        }
    }
}

/// `duckdb_blob`: bytes the caller frees with `duckdb_free`.
#[repr(C)]
pub(crate) struct RawBlob {
    pub(crate) data: *mut c_void,
    pub(crate) size: Idx,
}

/// Declares the C functions lancet calls and loads them by name.
macro_rules! api {
    (
        required { $($field:ident = $symbol:literal : $ty:ty;)* }
        optional { $($ofield:ident = $osymbol:literal : $oty:ty;)* }
    ) => {
        /// The C functions of one loaded library, valid as long as the
        /// [`libloading::Library`] they came from stays loaded.
        pub(crate) struct Api {
            $(pub(crate) $field: $ty,)*
            $(pub(crate) $ofield: Option<$oty>,)*
        }

        impl Api {
            /// Looks up every function, or names the first one missing.
            ///
            /// # Safety
            /// `lib` must be a libduckdb whose functions have the C API's
            /// signatures, and must outlive every use of the result.
            unsafe fn load(lib: &libloading::Library) -> anyhow::Result<Api> {
                Ok(Api {
                    $($field: *lib.get::<$ty>(concat!($symbol, "\0").as_bytes()).map_err(|_| {
                        anyhow::anyhow!("it has no function {}; is it a libduckdb build?", $symbol)
                    })?,)*
                    $($ofield: lib.get::<$oty>(concat!($osymbol, "\0").as_bytes()).ok().map(|s| *s),)*
                })
            }
        }
    };
}

api! {
    required {
        open_ext = "duckdb_open_ext":
            unsafe extern "C" fn(*const c_char, *mut Handle, Handle, *mut *mut c_char) -> State;
        close = "duckdb_close": unsafe extern "C" fn(*mut Handle);
        connect = "duckdb_connect": unsafe extern "C" fn(Handle, *mut Handle) -> State;
        disconnect = "duckdb_disconnect": unsafe extern "C" fn(*mut Handle);
        interrupt = "duckdb_interrupt": unsafe extern "C" fn(Handle);
        create_config = "duckdb_create_config": unsafe extern "C" fn(*mut Handle) -> State;
        set_config = "duckdb_set_config":
            unsafe extern "C" fn(Handle, *const c_char, *const c_char) -> State;
        destroy_config = "duckdb_destroy_config": unsafe extern "C" fn(*mut Handle);
        query = "duckdb_query":
            unsafe extern "C" fn(Handle, *const c_char, *mut RawResult) -> State;
        destroy_result = "duckdb_destroy_result": unsafe extern "C" fn(*mut RawResult);
        result_error = "duckdb_result_error": unsafe extern "C" fn(*mut RawResult) -> *const c_char;
        column_count = "duckdb_column_count": unsafe extern "C" fn(*mut RawResult) -> Idx;
        row_count = "duckdb_row_count": unsafe extern "C" fn(*mut RawResult) -> Idx;
        column_type = "duckdb_column_type": unsafe extern "C" fn(*mut RawResult, Idx) -> i32;
        value_is_null = "duckdb_value_is_null": unsafe extern "C" fn(*mut RawResult, Idx, Idx) -> bool;
        value_varchar = "duckdb_value_varchar":
            unsafe extern "C" fn(*mut RawResult, Idx, Idx) -> *mut c_char;
        value_int64 = "duckdb_value_int64": unsafe extern "C" fn(*mut RawResult, Idx, Idx) -> i64;
        value_double = "duckdb_value_double": unsafe extern "C" fn(*mut RawResult, Idx, Idx) -> f64;
        value_blob = "duckdb_value_blob": unsafe extern "C" fn(*mut RawResult, Idx, Idx) -> RawBlob;
        free = "duckdb_free": unsafe extern "C" fn(*mut c_void);
        library_version = "duckdb_library_version": unsafe extern "C" fn() -> *const c_char;
    }
    optional {
        result_error_type = "duckdb_result_error_type": unsafe extern "C" fn(*mut RawResult) -> i32;
    }
}

/// A libduckdb loaded from a file, shared by every database opened
/// through it.
pub struct DuckDbLibrary {
    path: PathBuf,
    pub(crate) api: Api,
    /// `duckdb_library_version()`: `v1.5.6`.
    version: String,
    /// Kept loaded as long as `api` may be called; declared last, so it is
    /// unloaded after everything else is dropped.
    _lib: libloading::Library,
}

impl std::fmt::Debug for DuckDbLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DuckDbLibrary")
            .field("path", &self.path)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A C string from the library, as Rust text.
///
/// # Safety
/// `p` is null or a NUL-terminated string that stays valid for the call.
pub(crate) unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

impl DuckDbLibrary {
    /// Loads the libduckdb at `path` and checks that it has every C
    /// function lancet calls.
    pub fn load(path: &Path) -> anyhow::Result<Arc<DuckDbLibrary>> {
        Self::load_inner(path)
            .with_context(|| format!("cannot load DuckDB library {}", path.display()))
    }

    fn load_inner(path: &Path) -> anyhow::Result<Arc<DuckDbLibrary>> {
        // SAFETY: loading runs the library's initializers (C++ static
        // constructors of DuckDB, which touch nothing of ours). The
        // symbols are checked by name below; a file that exports them with
        // other signatures is not DuckDB, which we cannot detect.
        let lib = unsafe { libloading::Library::new(path) }?;
        // SAFETY: as above; `lib` moves into the struct with `api`.
        let api = unsafe { Api::load(&lib) }?;
        // SAFETY: takes no arguments and returns static data.
        let version = unsafe { text((api.library_version)()) };
        Ok(Arc::new(DuckDbLibrary {
            path: path.to_path_buf(),
            api,
            version,
            _lib: lib,
        }))
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `duckdb_library_version()`, as DuckDB writes it (`v1.5.6`).
    pub fn version(&self) -> &str {
        &self.version
    }

    /// `DuckDB v1.5.6 (path)`, as summaries and findings name the build.
    pub fn version_string(&self) -> String {
        format!("DuckDB {} ({})", self.version, self.path.display())
    }

    /// The release as three numbers, for ordering builds (`bisect`):
    /// `v1.5.6` is (1, 5, 6); a development build's suffix is ignored.
    pub fn release(&self) -> Option<(u64, u64, u64)> {
        parse_release(&self.version)
    }
}

/// `v1.5.6` or `v1.5.6-dev12` as (1, 5, 6).
pub fn parse_release(version: &str) -> Option<(u64, u64, u64)> {
    let v = version.trim().trim_start_matches('v');
    let core = v.split(['-', '+', ' ']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

#[cfg(test)]
mod tests {
    use super::parse_release;

    #[test]
    fn releases_parse() {
        assert_eq!(parse_release("v1.5.6"), Some((1, 5, 6)));
        assert_eq!(parse_release("v1.2.0-dev123"), Some((1, 2, 0)));
        assert_eq!(parse_release("nonsense"), None);
    }
}
