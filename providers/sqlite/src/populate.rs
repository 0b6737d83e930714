//! Filling a fresh database: tables first, then rows interleaved with
//! indexes, PRAGMAs and maintenance, then views and changes to the data.
//!
//! The schema model grows only with statements that succeeded; a statement
//! that fails with an expected error is simply left out, and an unexpected
//! error ends the database (it is a finding).

use crate::data_gen;
use crate::database::{SqliteDatabase, TableDefinition};
use crate::schema_gen::{self, TableModel};
use crate::statements::{self, Statement};
use lancet_core::{ExecError, Rng, Session};
use rand::seq::SliceRandom;
use rand::Rng as _;

/// One step after the tables exist.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Insert this many rows into table `.0`.
    Insert(usize, usize),
    Index(usize),
    View,
    Update(usize),
    Delete(usize),
    Maintenance,
    Pragma,
}

/// Generates and runs the statements that build one random database.
pub fn populate(
    rng: &mut Rng,
    session: &mut Session,
    version: i32,
) -> Result<SqliteDatabase, ExecError> {
    let like = set_initial_pragma(rng, session)?;
    let mut filler = Filler {
        session,
        version,
        like,
        db: SqliteDatabase::default(),
        tables: vec![],
        next_index: 0,
        next_view: 0,
    };
    filler.create_tables(rng)?;
    if filler.tables.is_empty() {
        return Ok(filler.db);
    }
    for step in plan_steps(rng, filler.tables.len()) {
        filler.run(rng, step)?;
    }
    let Filler {
        session, mut db, ..
    } = filler;
    count_rows(session, &mut db)?;
    sample_values(session, &mut db)?;
    Ok(db)
}

/// Maybe runs a PRAGMA before the tables exist; whether LIKE is still the
/// built-in afterwards: `PRAGMA case_sensitive_like` replaces it with a
/// function SQLite treats as non-deterministic.
fn set_initial_pragma(rng: &mut Rng, session: &mut Session) -> Result<bool, ExecError> {
    if rng.random_bool(0.15) {
        let pragma = data_gen::initial_pragma(rng);
        let replaces_like =
            matches!(&pragma, Statement::Pragma { name, .. } if name == "case_sensitive_like");
        if statements::run(session, &pragma)? && replaces_like {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The steps after the tables exist, for `tables` tables, in the order
/// they run: rows interleaved with indexes, a PRAGMA and maintenance; then
/// views and changes to the data.
fn plan_steps(rng: &mut Rng, tables: usize) -> Vec<Step> {
    let mut steps = vec![];
    for t in 0..tables {
        let mut remaining = rng.random_range(5..=40);
        while remaining > 0 {
            let k = rng.random_range(1..=10).min(remaining);
            steps.push(Step::Insert(t, k));
            remaining -= k;
        }
        for _ in 0..rng.random_range(0..=2) {
            steps.push(Step::Index(t));
        }
    }
    for _ in 0..rng.random_range(0..=1) {
        steps.push(Step::Pragma);
    }
    if rng.random_bool(0.3) {
        steps.push(Step::Maintenance);
    }
    steps.shuffle(rng);

    let mut later = vec![];
    for _ in 0..rng.random_range(0..=2) {
        later.push(Step::View);
    }
    for _ in 0..rng.random_range(0..=3) {
        later.push(Step::Update(rng.random_range(0..tables)));
    }
    if rng.random_bool(0.3) {
        later.push(Step::Delete(rng.random_range(0..tables)));
    }
    for _ in 0..rng.random_range(0..=2) {
        later.push(Step::Maintenance);
    }
    for _ in 0..rng.random_range(0..=1) {
        later.push(Step::Pragma);
    }
    later.shuffle(rng);
    steps.extend(later);
    steps
}

/// A database being filled: the session that runs its statements, and
/// the model of what succeeded so far.
struct Filler<'a, 'e> {
    session: &'a mut Session<'e>,
    version: i32,
    /// Whether LIKE is still the built-in (see [`set_initial_pragma`]).
    like: bool,
    db: SqliteDatabase,
    /// The tables that were created, for rows and indexes.
    tables: Vec<TableModel>,
    /// The numbers of the next index and view (each drawn one takes one,
    /// whether it succeeds or not).
    next_index: usize,
    next_view: usize,
}

impl Filler<'_, '_> {
    /// Creates one to four tables; those that fail are left out.
    fn create_tables(&mut self, rng: &mut Rng) -> Result<(), ExecError> {
        let db = &mut self.db;
        for i in 0..rng.random_range(1..=4) {
            let name = format!("t{i}");
            let (stmt, model) =
                schema_gen::create_table(rng, &db.schema, self.version, self.like, &name);
            let relation = schema_gen::table_relation(&stmt);
            let without_rowid = stmt.without_rowid;
            let definition = TableDefinition {
                create: stmt.clone(),
                stored_columns: model
                    .columns
                    .iter()
                    .filter(|c| !c.generated)
                    .map(|c| c.name.clone())
                    .collect(),
            };
            if statements::run(self.session, &Statement::CreateTable(stmt))? {
                if without_rowid {
                    db.without_rowid.insert(relation.name.clone());
                }
                db.definitions.insert(relation.name.clone(), definition);
                db.schema.relations.push(relation);
                self.tables.push(model);
            }
        }
        Ok(())
    }

    /// Draws and runs the statement of one step.
    fn run(&mut self, rng: &mut Rng, step: Step) -> Result<(), ExecError> {
        let (session, version, db) = (&mut *self.session, self.version, &mut self.db);
        match step {
            Step::Insert(t, rows) => {
                let stmt = data_gen::insert(rng, &db.schema, version, &self.tables[t], rows);
                statements::run(session, &Statement::Insert(stmt))?;
            }
            Step::Index(t) => {
                let stmt = schema_gen::create_index(
                    rng,
                    &db.schema,
                    version,
                    self.like,
                    &self.tables[t],
                    self.next_index,
                );
                self.next_index += 1;
                let entry = schema_gen::index_entry(&stmt);
                let partial = stmt.predicate.is_some();
                if statements::run(session, &Statement::CreateIndex(stmt))? {
                    if partial {
                        db.partial_indexes.insert(entry.name.clone());
                    }
                    db.schema.indexes.push(entry);
                }
            }
            Step::View => {
                let name = format!("v{}", self.next_view);
                self.next_view += 1;
                let (stmt, relation) = schema_gen::create_view(rng, db, version, &name);
                if statements::run(session, &Statement::CreateView(stmt))? {
                    db.schema.relations.push(relation);
                }
            }
            Step::Update(t) => {
                if let Some(stmt) = data_gen::update(rng, &db.schema, version, &self.tables[t]) {
                    statements::run(session, &Statement::Update(stmt))?;
                }
            }
            Step::Delete(t) => {
                let stmt = data_gen::delete(rng, &db.schema, version, &self.tables[t]);
                statements::run(session, &Statement::Delete(stmt))?;
            }
            Step::Maintenance => {
                statements::run(session, &data_gen::maintenance(rng, &db.schema))?;
            }
            Step::Pragma => {
                statements::run(session, &data_gen::planner_pragma(rng))?;
            }
        }
        Ok(())
    }
}

/// The longest text sampled, in characters.
const MAX_SAMPLED_TEXT: usize = 12;

/// Rows of each table read for [`SqliteDatabase::sampled`].
const SAMPLED_ROWS: usize = 8;

/// Samples values from the first rows of every table (the order does not
/// matter, only that it is the same for the same database).
fn sample_values(session: &mut Session, db: &mut SqliteDatabase) -> Result<(), ExecError> {
    let tables: Vec<String> = db.schema.tables().map(|t| t.name.clone()).collect();
    for table in tables {
        let sql = format!("SELECT * FROM {table} LIMIT {SAMPLED_ROWS}");
        match session.query_sql(&sql) {
            Ok(rows) => db.sampled.extend(
                rows.into_iter()
                    .flatten()
                    // A NUL would end the statement's text where it is printed.
                    .filter(|v| match v {
                        lancet_core::Value::Null => false,
                        // (and literals stay short, as the generator's own are).
                        lancet_core::Value::Text(t) => {
                            !t.contains('\0') && t.chars().count() <= MAX_SAMPLED_TEXT
                        }
                        _ => true,
                    }),
            ),
            Err(ExecError::Expected(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Counts the rows of every table and view, for the query generator's cost
/// model. A relation whose count fails (an expected error) stays uncounted.
fn count_rows(session: &mut Session, db: &mut SqliteDatabase) -> Result<(), ExecError> {
    for relation in &db.schema.relations {
        let sql = format!("SELECT COUNT(*) FROM {}", relation.name);
        match session.query_sql(&sql) {
            Ok(rows) => {
                if let Some(lancet_core::Value::Integer(n)) = rows.first().and_then(|r| r.first()) {
                    db.row_counts
                        .insert(relation.name.clone(), u64::try_from(*n).unwrap_or(0));
                }
            }
            Err(ExecError::Expected(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
