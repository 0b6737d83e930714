//! FROM clauses of a first relation and up to two joined ones (a derived
//! table for some), with the joins a provider's dialect has.

use crate::factors::{derived_factor, one_table_from, table_factor};
use crate::{ExactAggregates, QueryCore};
use crate::{ServerSchema, ServerTable, TypedColumn};
use lancet_core::{
    schema::RelationKind, BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind,
    Rng, Select, SelectItem, TableFactor,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// The joins a provider draws.
pub struct JoinMenu<C: 'static> {
    /// The kinds, repeated for weight.
    pub kinds: &'static [JoinKind],
    /// Whether a kind may be NATURAL (on the first join only: after two
    /// tables the left side may hold two columns of one name, which is
    /// ambiguous; columns are always qualified, so the merged column is
    /// never named bare).
    pub natural: fn(JoinKind) -> bool,
    /// Which categories a derived table may apply DISTINCT over (see
    /// [`QueryCore::derived`]).
    pub exact: fn(C) -> bool,
    /// How derived tables are written: `(query) AS alias`, or as common
    /// table expressions (`WITH alias AS [NOT] MATERIALIZED (query)`)
    /// where the dialect has them; drawn only if there are several.
    pub forms: &'static [DerivedForm],
    /// The exact aggregates a derived table's window calls may use (see
    /// [`QueryCore::derived`]); `None`: no window calls.
    pub windows: Option<&'static ExactAggregates<C>>,
    /// Whether derived tables may be `SELECT * EXCLUDE (...)` of their
    /// relation (where the dialect has it, see [`QueryCore::derived`]).
    pub wildcard_exclude: bool,
    /// Whether derived tables may be `SELECT * REPLACE (e AS c, ...)` of
    /// their relation (see [`QueryCore::derived`]).
    pub wildcard_replace: bool,
    /// Whether derived tables with listed items may carry a QUALIFY
    /// filter over a window call of `windows` (see
    /// [`crate::ExactAggregates::qualify`]).
    pub qualify: bool,
    /// Whether derived tables may be grouped with GROUP BY ALL over exact
    /// keys and aggregates of `windows` (see [`QueryCore::derived`]).
    pub group_by_all: bool,
    /// DuckDB's ASOF joins (see [`QueryCore::asof_join`]), over keys of
    /// the categories this accepts: ordered, and equal values identical.
    /// `None`: no ASOF joins.
    pub asof: Option<fn(C) -> bool>,
    /// DuckDB's POSITIONAL joins, drawn only where the pairing is
    /// determined: as the first join, between two base tables (see
    /// [`QueryCore::joined_from`]).
    pub positional: bool,
}

impl<S: ServerSchema, F: Clone + Default> QueryCore<S, F> {
    /// A first relation and up to two joined ones (a derived table for
    /// 15%), aliased `a0`, `a1`, ...; the one-row constant FROM clause
    /// when the database has no relation.
    pub fn joined_from(
        &mut self,
        rng: &mut Rng,
        menu: &JoinMenu<S::Category>,
    ) -> (FromClause, Vec<TypedColumn<S::Category>>) {
        let Some(first) = self.schema.parts().0.choose(rng).cloned() else {
            return Self::constant_from();
        };
        let mut cols = first.typed_columns("a0");
        let first_is_table = first.kind() == RelationKind::Table;
        let first = table_factor(first.name(), "a0");
        let mut joins = Vec::new();
        for j in 1..=Self::join_count(rng) {
            let alias = format!("a{j}");
            // POSITIONAL JOIN pairs rows by their order, which only a
            // single table's scan fixes (DuckDB's *Order Preservation*:
            // "FROM with a single table" keeps the original row order; a
            // join, a view or a derived table of several need not): so
            // only the first join, of a base table to a base table.
            if menu.positional && j == 1 && first_is_table && rng.random_bool(0.08) {
                let tables: Vec<S::Table> = self
                    .schema
                    .parts()
                    .0
                    .iter()
                    .filter(|t| t.kind() == RelationKind::Table)
                    .cloned()
                    .collect();
                if let Some(t) = tables.choose(rng) {
                    joins.push(Join {
                        kind: JoinKind::Positional,
                        factor: table_factor(t.name(), &alias),
                        constraint: JoinConstraint::None,
                    });
                    cols.extend(t.typed_columns(&alias));
                    continue;
                }
            }
            if let Some(keys) = menu.asof.filter(|_| rng.random_bool(0.1)) {
                if let Some((join, new_cols)) = self.asof_join(rng, &alias, &cols, keys) {
                    joins.push(join);
                    cols.extend(new_cols);
                    continue;
                }
            }
            let (factor, new_cols) = if rng.random_bool(0.15) {
                let (mut factor, cols) = self.derived(rng, &alias, menu);
                if menu.forms.len() > 1 {
                    if let TableFactor::Derived { form, .. } = &mut factor {
                        *form = *menu.forms.choose(rng).unwrap_or(&DerivedForm::Subquery);
                    }
                }
                (factor, cols)
            } else {
                let Some(t) = self.schema.parts().0.choose(rng) else {
                    continue;
                };
                (table_factor(t.name(), &alias), t.typed_columns(&alias))
            };
            let kind = *menu.kinds.choose(rng).unwrap_or(&JoinKind::Inner);
            let natural = j == 1 && (menu.natural)(kind) && rng.random_bool(0.1);
            let constraint = match kind {
                JoinKind::Cross | JoinKind::Comma => JoinConstraint::None,
                _ if natural => JoinConstraint::Natural,
                _ => JoinConstraint::On(self.join_condition(rng, (&cols, &new_cols), 0.0)),
            };
            joins.push(Join {
                kind,
                factor,
                constraint,
            });
            cols.extend(new_cols);
        }
        (FromClause { first, joins }, cols)
    }

    /// `ASOF [LEFT] JOIN (SELECT t AS c0 FROM r) AS alias ON l.t >= alias.c0`
    /// (or `>`, `<=`, `<`): each row so far with the right row nearest
    /// it. Determined only because the right side has no other column:
    /// rows that tie are identical, so whichever DuckDB picks, the row is
    /// the same. `t` is a column of a random relation and `l.t` one of
    /// `cols` of its category, which `keys` accepts; None where no pair
    /// fits. No equality key (`AND l.k = alias.c1`): DuckDB 1.5.6 then
    /// matches a NULL left `t` once `join_order` is off (in *Bugs lancet
    /// has found*), which would flood every run.
    fn asof_join(
        &mut self,
        rng: &mut Rng,
        alias: &str,
        cols: &[TypedColumn<S::Category>],
        keys: fn(S::Category) -> bool,
    ) -> Option<(Join, Vec<TypedColumn<S::Category>>)> {
        let table = self.schema.parts().0.choose(rng)?.clone();
        let inner_alias = format!("d{}", self.next_alias);
        self.next_alias += 1;
        let inner = table.typed_columns(&inner_alias);
        // A right column with a left partner of its category.
        let pair = |rng: &mut Rng| -> Option<(TypedColumn<S::Category>, Expr)> {
            let right: Vec<&TypedColumn<S::Category>> = inner
                .iter()
                .filter(|r| keys(r.category) && cols.iter().any(|l| l.category == r.category))
                .collect();
            let r = (*right.choose(rng)?).clone();
            let partners: Vec<&TypedColumn<S::Category>> =
                cols.iter().filter(|l| l.category == r.category).collect();
            let l = partners.choose(rng)?.expr.clone();
            Some((r, l))
        };
        let (time, left_time) = pair(rng)?;
        let items = vec![SelectItem::Expr {
            expr: time.expr.clone(),
            alias: Some("c0".into()),
        }];
        let new_cols = vec![TypedColumn {
            expr: Expr::column(Some(alias), "c0"),
            category: time.category,
        }];
        let op = *[BinaryOp::GtEq, BinaryOp::Gt, BinaryOp::LtEq, BinaryOp::Lt]
            .choose(rng)
            .unwrap_or(&BinaryOp::GtEq);
        let on = Expr::binary(op, left_time, Expr::column(Some(alias), "c0"));
        let select = Select {
            items,
            from: Some(one_table_from(table.name(), &inner_alias)),
            ..Select::default()
        };
        let factor = derived_factor(select, alias);
        let kind = if rng.random_bool(0.5) {
            JoinKind::AsOf
        } else {
            JoinKind::AsOfLeft
        };
        let join = Join {
            kind,
            factor,
            constraint: JoinConstraint::On(on),
        };
        Some((join, new_cols))
    }
}
