//! Common table expressions: a derived table whose form is a CTE is
//! printed once in its query's WITH clause and named by alias in FROM.

use super::*;

type Cte<'a> = (&'a str, &'a Query, DerivedForm);

/// The derived tables written as CTEs in the FROM clause of `select` (not
/// in its subqueries, which have WITH clauses of their own).
pub(super) fn ctes_of_select<'a>(select: &'a Select, out: &mut Vec<Cte<'a>>) {
    let Some(from) = &select.from else { return };
    for factor in std::iter::once(&from.first).chain(from.joins.iter().map(|j| &j.factor)) {
        if let TableFactor::Derived {
            query,
            alias,
            lateral: false,
            form,
        } = factor
        {
            if form.is_cte() {
                out.push((alias, query, *form));
            }
        }
    }
}

/// The same for every SELECT of a compound body.
pub(super) fn ctes_of_body<'a>(body: &'a SetExpr, out: &mut Vec<Cte<'a>>) {
    match body {
        SetExpr::Select(s) => ctes_of_select(s, out),
        SetExpr::SetOp { left, right, .. } => {
            ctes_of_body(left, out);
            ctes_of_body(right, out);
        }
    }
}

/// `ctes` once each. An alias that stands for two different derived
/// tables is left out: those are written in place, which means the same.
fn distinct_ctes(ctes: Vec<Cte<'_>>) -> Vec<Cte<'_>> {
    let mut once: Vec<Cte<'_>> = Vec::new();
    let mut clashing: Vec<&str> = Vec::new();
    for cte in ctes {
        match once.iter().find(|c| c.0 == cte.0) {
            None => once.push(cte),
            Some(c) if c.1 == cte.1 && c.2 == cte.2 => {}
            Some(_) => clashing.push(cte.0),
        }
    }
    once.retain(|c| !clashing.contains(&c.0));
    once
}

impl Printer {
    /// Prints the WITH clause for `ctes`, and opens the scope in which FROM
    /// clauses name those tables by alias (closed by
    /// [`Printer::end_cte_scope`]).
    pub(super) fn with_clause(&mut self, ctes: Vec<Cte<'_>>) {
        let ctes = distinct_ctes(ctes);
        if !ctes.is_empty() {
            self.s("WITH ");
            self.list(&ctes, ", ", |p, (alias, query, form)| {
                p.s(alias);
                p.s(match form {
                    DerivedForm::CteMaterialized => " AS MATERIALIZED ",
                    DerivedForm::CteNotMaterialized => " AS NOT MATERIALIZED ",
                    _ => " AS ",
                });
                p.query_in_parens(query);
            });
            self.s(" ");
        }
        let scope = ctes.iter().map(|c| c.0.to_string()).collect();
        self.cte_scopes.push(scope);
    }

    pub(super) fn end_cte_scope(&mut self) {
        self.cte_scopes.pop();
    }
}
