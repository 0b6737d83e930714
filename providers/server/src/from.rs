//! FROM clauses of a first relation and up to two joined ones (a derived
//! table for some), with the joins a provider's dialect has.

use crate::{table_factor, ExactAggregates, QueryCore};
use crate::{ServerSchema, ServerTable, TypedColumn};
use lancet_core::{DerivedForm, FromClause, Join, JoinConstraint, JoinKind, Rng, TableFactor};
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
        let first = table_factor(first.name(), "a0");
        let mut joins = Vec::new();
        for j in 1..=Self::join_count(rng) {
            let alias = format!("a{j}");
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
}
