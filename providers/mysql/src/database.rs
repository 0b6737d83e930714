//! One generated MySQL database as the rest of lancet sees it: the
//! provider's own model, which its query generator reads, and the core
//! view of it.

use crate::query::MyQueryGenerator;
use crate::schema::MySchema;
use lancet_core::{GeneratedDatabase, QueryGenerator, Schema};

pub struct MyDatabase {
    pub model: MySchema,
    core: Schema,
}

impl MyDatabase {
    pub fn new(model: MySchema) -> MyDatabase {
        let core = model.to_core();
        MyDatabase { model, core }
    }
}

impl GeneratedDatabase for MyDatabase {
    fn schema(&self) -> &Schema {
        &self.core
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        Box::new(MyQueryGenerator::new(self.model.clone()))
    }
}
