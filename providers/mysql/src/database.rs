//! One generated MySQL database as the rest of lancet sees it: the
//! provider's own model, which its query generator reads, and the core
//! view of it (the server toolkit's [`lancet_server::ServerDatabase`]).

use crate::schema::MySchema;

/// One generated MySQL or MariaDB database.
pub type MyDatabase = lancet_server::ServerDatabase<MySchema>;
