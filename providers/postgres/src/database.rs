//! One generated PostgreSQL database as the rest of lancet sees it: the
//! provider's own model ([`PgSchema`]), which its query generator reads,
//! and the core view of it.

use crate::query::PgQueryGenerator;
use crate::schema::PgSchema;
use lancet_core::{GeneratedDatabase, QueryGenerator, Schema};

/// One generated PostgreSQL database: the provider's own model, which the
/// query generator reads, and the core view of it for the rest of lancet.
pub struct PgDatabase {
    pub model: PgSchema,
    core: Schema,
}

impl PgDatabase {
    pub fn new(model: PgSchema) -> PgDatabase {
        let core = model.to_core();
        PgDatabase { model, core }
    }
}

impl GeneratedDatabase for PgDatabase {
    fn schema(&self) -> &Schema {
        &self.core
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        Box::new(PgQueryGenerator::new(self.model.clone()))
    }
}
