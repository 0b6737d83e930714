//! The typed schema model's shared parts: typed columns, constants
//! sampled from the data, the core view of a schema and the generated
//! database the rest of lancet holds.

use crate::{ServerSchema, ServerTable};
use lancet_core::schema::{Relation, Schema};
use lancet_core::{Expr, GeneratedDatabase, QueryGenerator, Rng};
use rand::seq::IndexedRandom;

/// A column (or expression) a generated expression may read, with its
/// category.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedColumn<C> {
    pub expr: Expr,
    pub category: C,
}

/// Constants taken from the data: a comparison with one selects rows,
/// where the generator's own constants mostly miss small tables.
#[derive(Clone, Debug)]
pub struct Sampled<C> {
    by_category: Vec<(C, Vec<Expr>)>,
}

impl<C> Default for Sampled<C> {
    fn default() -> Self {
        Sampled {
            by_category: Vec::new(),
        }
    }
}

impl<C: PartialEq + Copy> Sampled<C> {
    pub fn add(&mut self, category: C, literal: Expr) {
        match self.by_category.iter_mut().find(|(c, _)| *c == category) {
            Some((_, values)) => values.push(literal),
            None => self.by_category.push((category, vec![literal])),
        }
    }

    /// Adds `literal` unless it was sampled already: repeated values would
    /// weigh the draw.
    pub fn add_new(&mut self, category: C, literal: Expr) {
        let known = self
            .by_category
            .iter()
            .any(|(c, values)| *c == category && values.contains(&literal));
        if !known {
            self.add(category, literal);
        }
    }

    /// A sampled literal of `category`, if any was sampled.
    pub fn pick(&self, rng: &mut Rng, category: C) -> Option<Expr> {
        self.by_category
            .iter()
            .find(|(c, _)| *c == category)
            .and_then(|(_, values)| values.choose(rng))
            .cloned()
    }

    pub fn is_empty(&self) -> bool {
        self.by_category.is_empty()
    }
}

/// The core schema the runner and oracles see, from the provider's model.
pub fn to_core<S: ServerSchema>(schema: &S) -> Schema {
    Schema {
        relations: schema
            .parts()
            .0
            .iter()
            .map(|t| Relation {
                name: t.name().to_string(),
                kind: t.kind(),
                columns: t
                    .columns()
                    .iter()
                    .map(|(name, ty)| t.core_column(name, ty))
                    .collect(),
            })
            .collect(),
        indexes: schema.indexes(),
    }
}

/// One generated database as the rest of lancet sees it: the provider's
/// own model, which its query generator reads, and the core view of it.
pub struct ServerDatabase<S> {
    pub model: S,
    core: Schema,
}

impl<S: ServerSchema> ServerDatabase<S> {
    pub fn new(model: S) -> ServerDatabase<S> {
        let core = to_core(&model);
        ServerDatabase { model, core }
    }
}

impl<S: ServerSchema> GeneratedDatabase for ServerDatabase<S> {
    fn schema(&self) -> &Schema {
        &self.core
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        self.model.query_generator()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_are_drawn_by_category_without_repeats() {
        let mut s: Sampled<u8> = Sampled::default();
        assert!(s.is_empty());
        s.add_new(1, Expr::int(5));
        s.add_new(1, Expr::int(5));
        s.add_new(2, Expr::int(7));
        let mut rng = Rng::seed_from_u64(1);
        for _ in 0..20 {
            assert_eq!(s.pick(&mut rng, 1), Some(Expr::int(5)));
        }
        assert_eq!(s.pick(&mut rng, 3), None);
    }
}
