//! An evaluator of SQLite expressions on one row, for PQS: it computes in
//! lancet what SQLite must compute, so that the pivot row's truth value is
//! known without asking the database.
//!
//! Any mistake here is a false alarm, so the evaluator covers only what it
//! reproduces exactly, ported from SQLite 3.54's source: three-valued
//! logic, storage classes and affinity, comparisons with their conversions
//! and collations, IS, BETWEEN, IN lists, LIKE and GLOB, CASE, CAST,
//! arithmetic with SQLite's overflow rules, `||`, bitwise operators and a
//! set of scalar functions ([`functions`]). Everything else, and every
//! value it cannot represent exactly, is a [`Decline`]: the caller then
//! generates nothing. Integer overflow errors (`abs(-9223372036854775808)`)
//! are declined too, as is anything that could make SQLite raise one.
//!
//! Submodules: [`fp`] (text and float conversions), [`value`] (storage
//! classes and their conversions), [`typing`] (static affinity and
//! collation), [`compare`] (comparison), [`pattern`] (LIKE, GLOB),
//! [`functions`].

pub mod collation;
pub mod compare;
pub mod fp;
pub mod functions;
pub mod pattern;
pub mod typing;
pub mod value;

use collation::Collation;
use compare::{apply_comparison_affinity, mem_compare};
use lancet_core::ast::ColumnRef;
use lancet_core::{BinaryOp, Expr, LikeKind, Truth, UnaryOp, Value};
use std::cmp::Ordering;
use typing::{has_collate, Aff};
use value::{bool_value, from_bool, int_value, numeric_type, real_value, Val};

/// The library versions whose semantics the evaluator reproduces: it was
/// ported from and validated against SQLite 3.54 built with the default
/// options (as bundled). Earlier releases convert text to numbers and
/// render reals differently, and builds with `SQLITE_LIKE_DOESNT_MATCH_BLOBS`,
/// `SQLITE_CASE_SENSITIVE_LIKE` or `SQLITE_SUBSTR_COMPATIBILITY` differ too;
/// the validation test (`LANCET_PQS_SQLITE_LIB`) tells whether another
/// library agrees.
pub const SUPPORTED_VERSIONS: std::ops::Range<i32> = 3_054_000..3_055_000;

/// Why the evaluator gives no answer: a construct or value it does not
/// reproduce exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decline(pub &'static str);

pub type Result<T> = std::result::Result<T, Decline>;

pub(crate) fn decline<T>(why: &'static str) -> Result<T> {
    Err(Decline(why))
}

/// One column in scope: how expressions reference it, what SQLite knows of
/// it, and its value on the pivot row.
#[derive(Clone, Debug)]
pub struct ColumnInfo {
    /// The alias it is read through (`p0`).
    pub table: String,
    pub name: String,
    pub affinity: Aff,
    pub collation: Collation,
    /// `None` if the value SQLite returned may not be exactly what it holds.
    pub value: Option<Val>,
}

/// Evaluates expressions over one row of columns.
pub struct Evaluator<'a> {
    columns: &'a [ColumnInfo],
}

impl<'a> Evaluator<'a> {
    pub fn new(columns: &'a [ColumnInfo]) -> Evaluator<'a> {
        Evaluator { columns }
    }

    fn column(&self, c: &ColumnRef) -> Result<&'a ColumnInfo> {
        let found = self
            .columns
            .iter()
            .find(|k| k.name == c.column && c.table.as_deref() == Some(k.table.as_str()));
        match found {
            Some(k) => Ok(k),
            None => decline("column not in scope"),
        }
    }

    /// The truth value of `e` as a WHERE clause sees it.
    pub fn truth(&self, e: &Expr) -> Result<Truth> {
        Ok(value::truth(&self.eval(e)?))
    }

    /// The value of `e`.
    pub fn eval(&self, e: &Expr) -> Result<Val> {
        match e {
            Expr::Literal(v) => literal(v),
            Expr::Column(c) => match &self.column(c)?.value {
                Some(v) => Ok(v.clone()),
                None => decline("pivot value not known exactly"),
            },
            Expr::Unary { op, expr } => self.unary(*op, expr),
            Expr::Binary { op, left, right } => self.binary(*op, left, right),
            Expr::IsNull { expr, negated } => {
                let v = self.eval(expr)?;
                Ok(Val::Int(i64::from(v.is_null() != *negated)))
            }
            Expr::IsBool {
                expr,
                value,
                negated,
            } => {
                let v = self.eval(expr)?;
                Ok(is_bool(&v, *value, *negated))
            }
            Expr::Like {
                kind,
                expr,
                pattern,
                escape,
                negated,
            } => {
                let subject = self.eval(expr)?;
                let pattern = self.eval(pattern)?;
                let escape = match escape {
                    Some(e) => Some(self.eval(e)?),
                    None => None,
                };
                let matched = match kind {
                    LikeKind::Like => functions::like(&pattern, &subject, escape.as_ref())?,
                    LikeKind::Glob if escape.is_none() => functions::glob(&pattern, &subject)?,
                    _ => return decline("pattern operator"),
                };
                Ok(not_if(matched, *negated))
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
                symmetric,
            } => {
                if *symmetric {
                    return decline("BETWEEN SYMMETRIC");
                }
                // SQLite codes it as `x >= low AND x <= high`.
                let x = self.eval(expr)?;
                let lo = self.eval(low)?;
                let hi = self.eval(high)?;
                let ge = self.comparison(BinaryOp::GtEq, expr, low, x.clone(), lo)?;
                let le = self.comparison(BinaryOp::LtEq, expr, high, x, hi)?;
                Ok(not_if(and(&ge, &le), *negated))
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => Ok(not_if(self.in_list(expr, list)?, *negated)),
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => self.case(operand.as_deref(), branches, otherwise.as_deref()),
            Expr::Cast { expr, ty } => {
                let v = self.eval(expr)?;
                let to = match typing::Aff::of(crate::types::affinity(Some(ty))) {
                    Aff::Blob | Aff::None => value::CastTo::Blob,
                    Aff::Text => value::CastTo::Text,
                    Aff::Numeric => value::CastTo::Numeric,
                    Aff::Integer => value::CastTo::Integer,
                    Aff::Real => value::CastTo::Real,
                };
                value::cast(&v, to)
            }
            Expr::Collate { expr, collation } => {
                if Collation::from_name(collation).is_none() {
                    return decline("unknown collation");
                }
                self.eval(expr)
            }
            Expr::Function {
                name,
                args,
                distinct,
            } => {
                if *distinct {
                    return decline("DISTINCT in a scalar function");
                }
                self.function(name, args)
            }
            Expr::InSubquery { .. } | Expr::Exists { .. } | Expr::Subquery(_) => {
                decline("subquery")
            }
            Expr::Quantified { .. } | Expr::QuantifiedSubquery { .. } => decline("ANY/ALL"),
            Expr::CountStar => decline("aggregate"),
            Expr::Window { .. } => decline("window function"),
        }
    }

    fn unary(&self, op: UnaryOp, expr: &Expr) -> Result<Val> {
        match op {
            UnaryOp::Plus => self.eval(expr),
            UnaryOp::Not => Ok(from_bool(bool_value(&self.eval(expr)?).map(|b| !b))),
            UnaryOp::BitNot => {
                let v = self.eval(expr)?;
                Ok(if v.is_null() {
                    Val::Null
                } else {
                    Val::Int(!int_value(&v))
                })
            }
            UnaryOp::Neg => {
                // `-5` and `-0.5` are negated literals; any other `-x` is
                // coded as `0 - x` (so `-(0.0)` is 0.0 but `-0.0` is -0.0).
                match expr {
                    Expr::Literal(Value::Integer(i)) if *i >= 0 => Ok(Val::Int(-i)),
                    Expr::Literal(Value::Real(r)) if !r.is_nan() && r.is_sign_positive() => {
                        match literal(&Value::Real(*r))? {
                            Val::Real(x) => Ok(Val::Real(-x)),
                            _ => decline("real literal"),
                        }
                    }
                    _ => arithmetic(BinaryOp::Sub, Val::Int(0), self.eval(expr)?),
                }
            }
        }
    }

    fn binary(&self, op: BinaryOp, left: &Expr, right: &Expr) -> Result<Val> {
        use BinaryOp::*;
        if matches!(op, IsNotDistinctFrom | IsDistinctFrom) {
            // `x IS TRUE` is a truth test, not a comparison with 1.
            if let Some(b) = skip_collate_and_likely(right)? {
                let v = self.eval(left)?;
                // The right operand is still evaluated in the tree, but it
                // is a constant: nothing to check.
                return Ok(is_bool(&v, b, op == IsDistinctFrom));
            }
        }
        let l = self.eval(left)?;
        let r = self.eval(right)?;
        match op {
            And => Ok(and(&l, &r)),
            Or => Ok(or(&l, &r)),
            Eq | NotEq | Lt | LtEq | Gt | GtEq | IsNotDistinctFrom | IsDistinctFrom => {
                self.comparison(op, left, right, l, r)
            }
            Add | Sub | Mul | Div | Mod => arithmetic(op, l, r),
            Concat => concat(&l, &r),
            BitAnd | BitOr | ShiftLeft | ShiftRight => Ok(bitwise(op, &l, &r)),
            RegexMatch => decline("REGEXP"),
            IntDiv | BitXor | Xor => decline("MySQL's DIV, ^ and XOR"),
        }
    }

    /// `left op right` for a comparison operator, with the affinity and
    /// collation SQLite derives from the two operand expressions.
    fn comparison(&self, op: BinaryOp, left: &Expr, right: &Expr, l: Val, r: Val) -> Result<Val> {
        let aff = Aff::for_comparison(self.affinity(left)?, self.affinity(right)?);
        let coll = self.comparison_collation(left, right)?;
        Ok(compare_values(op, l, r, aff, coll))
    }

    /// `x IN (list)`: each item compared with `x` under `x`'s affinity and
    /// collation only (the items' own do not count).
    fn in_list(&self, expr: &Expr, list: &[Expr]) -> Result<Val> {
        // One constant item turns into `x = +item`, where a COLLATE in the
        // item would count; avoid the difference.
        if list.iter().any(has_collate) {
            return decline("COLLATE in an IN list");
        }
        let x = self.eval(expr)?;
        let items = list
            .iter()
            .map(|e| self.eval(e))
            .collect::<Result<Vec<Val>>>()?;
        if x.is_null() {
            return Ok(Val::Null);
        }
        let aff = self.affinity(expr)?;
        let coll = self.collation(expr)?.unwrap_or(Collation::Binary);
        let mut saw_null = false;
        for item in items {
            if item.is_null() {
                saw_null = true;
            } else if compare_values(BinaryOp::Eq, x.clone(), item, aff, coll) == Val::Int(1) {
                return Ok(Val::Int(1));
            }
        }
        Ok(if saw_null { Val::Null } else { Val::Int(0) })
    }

    fn case(
        &self,
        operand: Option<&Expr>,
        branches: &[(Expr, Expr)],
        otherwise: Option<&Expr>,
    ) -> Result<Val> {
        // Every branch is evaluated, so that a branch the evaluator cannot
        // do declines the whole CASE even where SQLite would skip it.
        let x = operand.map(|o| self.eval(o)).transpose()?;
        let mut chosen = None;
        for (when, then) in branches {
            let w = self.eval(when)?;
            let t = self.eval(then)?;
            let hit = match (&x, operand) {
                (Some(x), Some(o)) => {
                    bool_value(&self.comparison(BinaryOp::Eq, o, when, x.clone(), w)?)
                }
                _ => bool_value(&w),
            };
            if chosen.is_none() && hit == Some(true) {
                chosen = Some(t);
            }
        }
        let otherwise = otherwise.map(|o| self.eval(o)).transpose()?;
        Ok(chosen.or(otherwise).unwrap_or(Val::Null))
    }
}

/// A literal as SQLite reads its printed form (`crate` printer): reals
/// through SQLite's own text-to-double conversion.
pub fn literal(v: &Value) -> Result<Val> {
    match v {
        Value::Null => Ok(Val::Null),
        Value::Integer(i) => Ok(Val::Int(*i)),
        // The printer writes NaN as NULL and infinities as `1e999`.
        Value::Real(r) if r.is_nan() => Ok(Val::Null),
        Value::Real(r) => {
            let text = if r.is_infinite() {
                "1e999".to_string()
            } else {
                format!("{:?}", r.abs())
            };
            let (rc, x) = fp::atof(text.as_bytes());
            if rc <= 0 {
                return decline("real literal");
            }
            Ok(Val::Real(if r.is_sign_negative() { -x } else { x }))
        }
        Value::Text(s) if s.contains('\0') => decline("NUL in a text literal"),
        Value::Text(s) => Ok(Val::Text(s.clone())),
        Value::Blob(b) => Ok(Val::Blob(b.clone())),
        Value::Boolean(b) => Ok(Val::Int(i64::from(*b))),
        Value::Decimal(_) => decline("decimal literal"),
    }
}

/// If `e` is TRUE or FALSE, possibly under COLLATE or likely(): SQLite
/// reads `x IS e` as a truth test then.
fn skip_collate_and_likely(e: &Expr) -> Result<Option<bool>> {
    match e {
        Expr::Literal(Value::Boolean(b)) => Ok(Some(*b)),
        Expr::Collate { expr, collation } => match Collation::from_name(collation) {
            Some(_) => skip_collate_and_likely(expr),
            None => decline("unknown collation"),
        },
        Expr::Function { name, .. }
            if ["likely", "unlikely", "likelihood"]
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name)) =>
        {
            match skip_collate_and_likely_arg(e)? {
                Some(_) => decline("IS likely(TRUE)"),
                None => Ok(None),
            }
        }
        _ => Ok(None),
    }
}

fn skip_collate_and_likely_arg(e: &Expr) -> Result<Option<bool>> {
    match e {
        Expr::Function { args, .. } => match args.first() {
            Some(a) => skip_collate_and_likely(a),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// `x IS [NOT] TRUE|FALSE` (`OP_IsTrue`).
fn is_bool(v: &Val, value: bool, negated: bool) -> Val {
    let b = bool_value(v);
    let is = b == Some(value);
    Val::Int(i64::from(is != negated))
}

fn not_if(v: Val, negated: bool) -> Val {
    if negated {
        from_bool(bool_value(&v).map(|b| !b))
    } else {
        v
    }
}

fn and(l: &Val, r: &Val) -> Val {
    match (bool_value(l), bool_value(r)) {
        (Some(false), _) | (_, Some(false)) => Val::Int(0),
        (Some(true), Some(true)) => Val::Int(1),
        _ => Val::Null,
    }
}

fn or(l: &Val, r: &Val) -> Val {
    match (bool_value(l), bool_value(r)) {
        (Some(true), _) | (_, Some(true)) => Val::Int(1),
        (Some(false), Some(false)) => Val::Int(0),
        _ => Val::Null,
    }
}

/// A comparison opcode on two values: NULL unless `IS`/`IS NOT`, else the
/// affinity's conversions and then [`mem_compare`].
pub fn compare_values(op: BinaryOp, l: Val, r: Val, aff: Aff, coll: Collation) -> Val {
    use BinaryOp::*;
    let null_eq = matches!(op, IsNotDistinctFrom | IsDistinctFrom);
    if l.is_null() || r.is_null() {
        if !null_eq {
            return Val::Null;
        }
        let same = l.is_null() && r.is_null();
        return Val::Int(i64::from(same == (op == IsNotDistinctFrom)));
    }
    let (l, r) = apply_comparison_affinity(aff, l, r);
    let ord = mem_compare(&l, &r, coll);
    let result = match op {
        Eq | IsNotDistinctFrom => ord == Ordering::Equal,
        NotEq | IsDistinctFrom => ord != Ordering::Equal,
        Lt => ord == Ordering::Less,
        LtEq => ord != Ordering::Greater,
        Gt => ord == Ordering::Greater,
        GtEq => ord != Ordering::Less,
        _ => false,
    };
    Val::Int(i64::from(result))
}

/// `+ - * / %` (`OP_Add` and its siblings): integer arithmetic while both
/// operands are integers and nothing overflows, else real arithmetic;
/// division or remainder by zero and NaN results are NULL.
pub fn arithmetic(op: BinaryOp, l: Val, r: Val) -> Result<Val> {
    use BinaryOp::*;
    if l.is_null() || r.is_null() {
        return Ok(Val::Null);
    }
    let (nl, nr) = (numeric_type(&l), numeric_type(&r));
    if let (Val::Int(b), Val::Int(a)) = (&nl, &nr) {
        let (b, a) = (*b, *a);
        let int = match op {
            Add => b.checked_add(a),
            Sub => b.checked_sub(a),
            Mul => b.checked_mul(a),
            Div => {
                if a == 0 {
                    return Ok(Val::Null);
                }
                b.checked_div(a)
            }
            Mod => {
                if a == 0 {
                    return Ok(Val::Null);
                }
                Some(b % if a == -1 { 1 } else { a })
            }
            _ => return decline("not arithmetic"),
        };
        if let Some(i) = int {
            return Ok(Val::Int(i));
        }
    }
    // Real arithmetic reads the original operands again.
    let (rb, ra) = (real_value(&l), real_value(&r));
    let result = match op {
        Add => rb + ra,
        Sub => rb - ra,
        Mul => rb * ra,
        Div => {
            if ra == 0.0 {
                return Ok(Val::Null);
            }
            rb / ra
        }
        Mod => {
            let (ib, ia) = (int_value(&l), int_value(&r));
            if ia == 0 {
                return Ok(Val::Null);
            }
            (ib % if ia == -1 { 1 } else { ia }) as f64
        }
        _ => return decline("not arithmetic"),
    };
    Ok(if result.is_nan() {
        Val::Null
    } else {
        Val::Real(result)
    })
}

/// `||`: the text of both operands (blobs' bytes as they are).
fn concat(l: &Val, r: &Val) -> Result<Val> {
    if l.is_null() || r.is_null() {
        return Ok(Val::Null);
    }
    let mut bytes = value::bytes_of(l);
    bytes.extend(value::bytes_of(r));
    Ok(Val::Text(value::text_from_bytes(bytes)?))
}

/// `& | << >>` on the operands' integer values.
fn bitwise(op: BinaryOp, l: &Val, r: &Val) -> Val {
    if l.is_null() || r.is_null() {
        return Val::Null;
    }
    let mut a = int_value(l);
    let mut b = int_value(r);
    let mut left_shift = op == BinaryOp::ShiftLeft;
    match op {
        BinaryOp::BitAnd => a &= b,
        BinaryOp::BitOr => a |= b,
        _ if b != 0 => {
            if b < 0 {
                left_shift = !left_shift;
                b = if b > -64 { -b } else { 64 };
            }
            if b >= 64 {
                a = if a >= 0 || left_shift { 0 } else { -1 };
            } else {
                let mut u = a as u64;
                if left_shift {
                    u <<= b;
                } else {
                    u >>= b;
                    if a < 0 {
                        u |= u64::MAX << (64 - b);
                    }
                }
                a = u as i64;
            }
        }
        _ => {}
    }
    Val::Int(a)
}
