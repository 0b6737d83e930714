//! The statement forms beyond plain reads and writes that a schedule may
//! hold where its DBMS has them: moves (an UPDATE of the key), upserts,
//! `IGNORE` and a UNIQUE index on `v` with `WHERE v = c`. What the DBMS
//! offers ([`Forms`]), how it spells them ([`Spellings`], carried by the
//! schedule so that its SQL reads back the same), and the keys a move
//! takes ([`partner`]).

use lancet_core::txn::{Form, Transactions};
use serde::{Deserialize, Serialize};

/// How far a move takes a row: a row below its table's pivot (`base +
/// MOVE`) moves up by this much, one at or above it moves down.
pub const MOVE: i64 = 500;

/// The key a row at `k` moves to under a move whose pivot is `pivot`.
///
/// Why a move can never collide with another row's key, in any
/// interleaving: keys of table `n` lie in `n * 1000 ..`, and every row is
/// born into a pair of keys `{b, b + 500}` (`b` below the pivot) that no
/// other row was born into: the initial rows at `base + 1 ..` (a quarter
/// of them at the upper key, where rows move), inserts at `base + 101
/// ..`, upserts at `base + 50 ..` or at an initial row's key. A move
/// flips a row between the two keys of its pair, so each row only ever
/// holds one of its own two keys. The one exception is an upsert or
/// `INSERT IGNORE` at an initial row's key after that row moved away: a
/// second row is born into the pair, and the model allows a duplicate
/// key there ([`lancet_core::txn::Conflict::DuplicateKey`]).
pub fn partner(k: i64, pivot: i64) -> i64 {
    if k < pivot {
        k + MOVE
    } else {
        k - MOVE
    }
}

/// The DBMS's spelling of each form it has, as templates (see
/// [`Form`]); a schedule holds only forms spelled here.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spellings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upsert_add: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_ignore: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_ignore: Option<String>,
}

impl Spellings {
    /// Every form `tx` spells.
    pub fn of(tx: &dyn Transactions) -> Spellings {
        Spellings {
            upsert_add: tx.spelling(Form::UpsertAdd),
            insert_ignore: tx.spelling(Form::InsertIgnore),
            update_ignore: tx.spelling(Form::UpdateIgnore),
        }
    }

    /// No form is spelled (a schedule of the plain statements).
    pub fn is_empty(&self) -> bool {
        *self == Spellings::default()
    }

    /// The template of `form`, if spelled.
    pub fn get(&self, form: Form) -> Option<&str> {
        match form {
            Form::UpsertAdd => self.upsert_add.as_deref(),
            Form::InsertIgnore => self.insert_ignore.as_deref(),
            Form::UpdateIgnore => self.update_ignore.as_deref(),
        }
    }

    /// `form` filled in: `{name}` by its value for each of `values`. A
    /// form the schedule does not spell (a record edited by hand) prints
    /// as a comment that fails, not as another statement.
    pub fn fill(&self, form: Form, values: &[(&str, String)]) -> String {
        let Some(template) = self.get(form) else {
            return format!(
                "SELECT 'this DBMS has no {form:?}' AS no_such_form FROM no_such_table"
            );
        };
        let mut sql = template.to_string();
        for (name, value) in values {
            sql = sql.replace(&format!("{{{name}}}"), value);
        }
        sql
    }
}

/// What a DBMS offers the schedules beyond plain statements: drawn only
/// where offered, so that other DBMSs' schedules stay as they were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Forms {
    /// Rows may move to new keys ([`Transactions::key_updates`]).
    pub moves: bool,
    /// Tables may have a UNIQUE index on `v` ([`Transactions::unique_v`]).
    pub unique_v: bool,
    pub spellings: Spellings,
}

impl Forms {
    /// What `tx` offers.
    pub fn of(tx: &dyn Transactions) -> Forms {
        Forms {
            moves: tx.key_updates(),
            unique_v: tx.unique_v(),
            spellings: Spellings::of(tx),
        }
    }

    /// Whether anything beyond the plain statements is offered.
    pub fn any(&self) -> bool {
        self.moves || self.unique_v || !self.spellings.is_empty()
    }
}
