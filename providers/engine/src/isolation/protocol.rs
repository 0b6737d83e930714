//! The messages between parent and child: frames (a `u32` length and its
//! bytes), requests, and replies with rows or an error.

use super::*;

/// What the child is told to do.
pub(super) enum Request<'a> {
    /// Close the current database (if any) and open a new, empty one
    /// (`None`), or the database file at this path (sessions of the
    /// transaction oracle sharing one database).
    Open(Option<&'a Path>),
    Execute(&'a str),
    Query(&'a str),
    /// Several queries, stopping at the first that fails: one round trip.
    QueryMany(&'a [&'a str]),
    SetKnobs(&'a KnobSetting),
    /// Close the current database; no reply.
    Close,
}

pub(super) fn write_frame(out: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "frame over 4 GiB"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(body)?;
    out.flush()
}

/// The next frame, or `None` at a clean end of input.
pub(super) fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads the fields of a frame in order; every read checks the length.
pub(super) struct Fields<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Fields<'a> {
    pub(super) fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "truncated frame from an engine worker process",
            ));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    pub(super) fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(super) fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(super) fn u64(&mut self) -> io::Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    pub(super) fn bytes(&mut self) -> io::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub(super) fn string(&mut self) -> io::Result<String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }
}

pub(super) fn encode_request(request: &Request<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    match request {
        Request::Open(file) => {
            out.push(b'O');
            if let Some(path) = file {
                out.extend_from_slice(path.as_os_str().as_bytes());
            }
        }
        Request::Execute(sql) => {
            out.push(b'E');
            out.extend_from_slice(sql.as_bytes());
        }
        Request::Query(sql) => {
            out.push(b'Q');
            out.extend_from_slice(sql.as_bytes());
        }
        Request::QueryMany(sqls) => {
            out.push(b'M');
            for sql in sqls.iter() {
                put_bytes(&mut out, sql.as_bytes());
            }
        }
        Request::SetKnobs(setting) => {
            out.push(b'S');
            for name in &setting.changes {
                put_bytes(&mut out, name.as_bytes());
            }
        }
        Request::Close => out.push(b'C'),
    }
    out
}

/// A reply as the parent reads it.
pub(super) enum Reply {
    Done,
    Rows(Vec<Row>),
    Error(DbError),
    /// The results of a `QueryMany`, up to and with the first error.
    Many(Vec<Reply>),
}

pub(super) fn encode_error(out: &mut Vec<u8>, e: &DbError) {
    out.push(b'X');
    out.push(match e.kind {
        FailureKind::Statement => 0,
        FailureKind::ConnectionLost => 1,
        FailureKind::Timeout => 2,
        FailureKind::Hang => 3,
    });
    match &e.code {
        Some(code) => {
            out.push(1);
            put_bytes(out, code.as_bytes());
        }
        None => out.push(0),
    }
    put_bytes(out, e.message.as_bytes());
}

pub(super) fn encode_rows(out: &mut Vec<u8>, rows: &[Row]) {
    out.push(b'R');
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for row in rows {
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        for v in row {
            match v {
                Value::Null => out.push(0),
                Value::Integer(i) => {
                    out.push(1);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Value::Real(r) => {
                    out.push(2);
                    out.extend_from_slice(&r.to_bits().to_le_bytes());
                }
                Value::Text(t) => {
                    out.push(3);
                    put_bytes(out, t.as_bytes());
                }
                Value::Blob(b) => {
                    out.push(4);
                    put_bytes(out, b);
                }
                Value::Boolean(b) => {
                    out.push(5);
                    out.push(u8::from(*b));
                }
                Value::Decimal(d) => {
                    out.push(6);
                    put_bytes(out, d.as_bytes());
                }
            }
        }
    }
}

pub(super) fn decode_reply(body: &[u8]) -> io::Result<Reply> {
    let mut f = Fields { rest: body };
    match f.u8()? {
        b'K' => Ok(Reply::Done),
        b'M' => {
            let n = f.u32()? as usize;
            let mut parts = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                parts.push(decode_reply(f.bytes()?)?);
            }
            Ok(Reply::Many(parts))
        }
        b'X' => {
            let kind = match f.u8()? {
                0 => FailureKind::Statement,
                1 => FailureKind::ConnectionLost,
                2 => FailureKind::Timeout,
                _ => FailureKind::Hang,
            };
            let code = match f.u8()? {
                0 => None,
                _ => Some(f.string()?),
            };
            let message = f.string()?;
            Ok(Reply::Error(DbError {
                kind,
                code,
                message,
            }))
        }
        b'R' => {
            let n = f.u32()? as usize;
            let mut rows = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                let width = f.u32()? as usize;
                let mut row = Vec::with_capacity(width.min(1 << 12));
                for _ in 0..width {
                    row.push(match f.u8()? {
                        0 => Value::Null,
                        1 => Value::Integer(f.u64()? as i64),
                        2 => Value::Real(f64::from_bits(f.u64()?)),
                        3 => Value::Text(f.string()?),
                        4 => Value::Blob(f.bytes()?.to_vec()),
                        5 => Value::Boolean(f.u8()? != 0),
                        6 => Value::Decimal(f.string()?),
                        t => {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!("unknown value tag {t} from an engine worker process"),
                            ))
                        }
                    });
                }
                rows.push(row);
            }
            Ok(Reply::Rows(rows))
        }
        t => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unknown reply {t} from an engine worker process"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_errors_survive_the_trip() {
        let rows = vec![
            vec![
                Value::Null,
                Value::Integer(-7),
                Value::Real(-0.0),
                Value::Text("é'x".into()),
            ],
            vec![
                Value::Blob(vec![0, 255]),
                Value::Boolean(true),
                Value::Decimal("1.50".into()),
                Value::Real(f64::NAN),
            ],
        ];
        let mut out = Vec::new();
        encode_rows(&mut out, &rows);
        let Reply::Rows(back) = decode_reply(&out).unwrap() else {
            panic!("not rows")
        };
        assert_eq!(back[0], rows[0]);
        assert_eq!(back[1][..3], rows[1][..3]);
        assert!(matches!(back[1][3], Value::Real(r) if r.is_nan()));
        assert!(matches!(back[0][2], Value::Real(r) if r.is_sign_negative()));

        let e = DbError {
            kind: FailureKind::Timeout,
            code: Some("SQLITE_INTERRUPT".into()),
            message: "interrupted".into(),
        };
        let mut out = Vec::new();
        encode_error(&mut out, &e);
        let Reply::Error(back) = decode_reply(&out).unwrap() else {
            panic!("not an error")
        };
        assert_eq!(back, e);
        assert!(decode_reply(&out[..out.len() - 1]).is_err());
    }
}
