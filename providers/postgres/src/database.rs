//! One generated PostgreSQL database as the rest of lancet sees it: the
//! provider's own model ([`PgSchema`]), which its query generator reads,
//! and the core view of it (the server toolkit's
//! [`lancet_server::ServerDatabase`]).

use crate::schema::PgSchema;

/// One generated PostgreSQL database: the provider's own model, which the
/// query generator reads, and the core view of it for the rest of lancet.
pub type PgDatabase = lancet_server::ServerDatabase<PgSchema>;
