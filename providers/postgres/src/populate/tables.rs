//! Tables: the shape drawn for each (plain, inheriting, partitioned), its
//! columns with their types, defaults, generated expressions and
//! constraints, and its partitions. Split from `populate.rs`, which keeps
//! the order of a database's statements.

use super::*;

/// Creates table `t{i}`, with its partitions if it is partitioned, and adds
/// what succeeded to the schema.
pub(super) fn create_table(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    i: usize,
    flavor: &dyn Flavor,
) -> Result<(), ExecError> {
    let name = format!("t{i}");
    let shape = TableShape::draw(rng, schema, flavor);
    let n = rng.random_range(1..=5);
    let mut cols = TableColumns::inherited(shape.parent.as_ref());
    for k in 0..n {
        cols.declare(rng, schema, &shape, k);
    }
    let primary_key = cols.table_constraints(rng, schema, &shape);
    let mut stmt = format!("CREATE TABLE {name} ({})", cols.defs.join(", "));
    if let Some(p) = &shape.parent {
        stmt.push_str(&format!(" INHERITS ({})", p.name));
    }
    let method = rng.random_range(0..3);
    if shape.partitioned {
        stmt.push_str(match method {
            0 => " PARTITION BY RANGE (c0)",
            1 => " PARTITION BY LIST (c0)",
            _ => " PARTITION BY HASH (c0)",
        });
    }
    if !out.run(StatementKind::CreateTable, stmt)? {
        return Ok(());
    }
    // The parent's unique columns are no longer unique over the rows its
    // name reads (the child's rows join them).
    if let Some(p) = &shape.parent {
        if let Some(t) = schema.relations.iter_mut().find(|t| t.name == p.name) {
            t.facts.unique.clear();
        }
    }
    let mut table = PgTable {
        name,
        columns: cols.all,
        kind: RelationKind::Table,
        insertable: cols.insertable,
        primary_key,
        writable: true,
        inheritable: !shape.partitioned && shape.placement == Placement::Plain,
        placement: shape.placement,
        twin: None,
        facts: cols.facts,
    };
    // The placement call concerns these tables only, not their twins.
    table.placement = flavor.after_create_table(out.session(), schema, &table)?;
    // A partition reads as its parent does, without its keys and facts.
    let partition = shape.partitioned.then(|| PgTable {
        primary_key: None,
        inheritable: false,
        facts: Default::default(),
        ..table.clone()
    });
    schema.relations.push(table);
    if let Some(partition) = partition {
        create_partitions(out, schema, method, &partition)?;
    }
    Ok(())
}

/// What a new table is before its columns: partitioned or a child of an
/// earlier table (or neither), and where its rows go (Citus).
struct TableShape {
    partitioned: bool,
    parent: Option<PgTable>,
    /// The number of its first own column (the parent's come first).
    first_own: usize,
    placement: Placement,
    /// Whether its rows are spread over the workers by its first own column.
    distributed: bool,
    /// The type the placement requires of its first own column, if any.
    first_type: Option<PgType>,
}

impl TableShape {
    /// Draws a shape among those the flavor supports.
    fn draw(rng: &mut Rng, schema: &PgSchema, flavor: &dyn Flavor) -> TableShape {
        let features = flavor.features();
        let parents: Vec<PgTable> = schema
            .relations
            .iter()
            .filter(|t| t.inheritable)
            .cloned()
            .collect();
        let shape = rng.random_range(0..100);
        let partitioned = features.partitioning && shape < 20;
        let parent = if features.inheritance && (20..30).contains(&shape) {
            parents.choose(rng).cloned()
        } else {
            None
        };
        let first_own = parent.as_ref().map_or(0, |p| p.columns.len());
        // Where the table goes decides which constraints it may have (Citus:
        // unique keys must include the distribution column, its first own).
        let (placement, first_type) = flavor.place(
            rng,
            schema,
            &format!("c{first_own}"),
            partitioned,
            parent.is_some(),
        );
        let distributed = placement.is_distributed();
        TableShape {
            partitioned,
            parent,
            first_own,
            placement,
            distributed,
            first_type,
        }
    }
}

/// The columns of a new table as its CREATE TABLE declares them, and what
/// the schema must know of them.
struct TableColumns {
    /// Its own columns (not inherited).
    own: Vec<(String, PgType)>,
    /// The definitions of its own columns, then its table constraints.
    defs: Vec<String>,
    /// The columns a new row may be given, inherited ones first.
    insertable: Vec<String>,
    /// Every column, inherited ones first.
    all: Vec<(String, PgType)>,
    facts: crate::schema::ColumnFacts,
}

impl TableColumns {
    /// The columns a table starts with: its parent's, if it has one. A
    /// child inherits its parent's NOT NULL and virtual columns, not its
    /// unique constraints.
    fn inherited(parent: Option<&PgTable>) -> TableColumns {
        TableColumns {
            own: Vec::new(),
            defs: Vec::new(),
            insertable: parent.map(|p| p.insertable.clone()).unwrap_or_default(),
            all: parent.map(|p| p.columns.clone()).unwrap_or_default(),
            facts: crate::schema::ColumnFacts {
                unique: Vec::new(),
                ..parent.map(|p| p.facts.clone()).unwrap_or_default()
            },
        }
    }

    /// Declares own column `k`: its type, whether it is generated, and its
    /// column constraints.
    fn declare(&mut self, rng: &mut Rng, schema: &PgSchema, shape: &TableShape, k: usize) {
        let cname = format!("c{}", shape.first_own + k);
        let ty = if shape.partitioned && k == 0 {
            PgType::from_name("integer")
        } else if let (0, Some(t)) = (k, &shape.first_type) {
            t.clone()
        } else {
            PgType::random(rng)
        };
        let mut def = format!("{cname} {}", ty.name);
        let generated = k > 0 && rng.random_bool(0.1);
        if generated {
            let clause = self.generation(rng, schema, shape.partitioned, &cname, &ty);
            def.push_str(&clause);
        } else {
            self.insertable.push(cname.clone());
        }
        let constraints = self.column_constraints(rng, shape, k, generated, &cname, &ty);
        def.push_str(&constraints);
        self.defs.push(def);
        self.own.push((cname.clone(), ty.clone()));
        self.all.push((cname, ty));
    }

    /// The GENERATED clause of column `cname`: an expression over the own
    /// columns before it that take values, stored or virtual.
    fn generation(
        &mut self,
        rng: &mut Rng,
        schema: &PgSchema,
        partitioned: bool,
        cname: &str,
        ty: &PgType,
    ) -> String {
        let cat = ty.category;
        let base: Vec<TypedColumn> = self
            .own
            .iter()
            .filter(|(c, _)| self.insertable.contains(c))
            .map(|(c, t)| TypedColumn {
                expr: Expr::column(None, c),
                category: t.category,
            })
            .collect();
        let mut g = ExprGen::new(schema, false);
        let e = if DDL_CATEGORIES.contains(&cat) {
            g.expr(rng, &base, cat, 2)
        } else {
            literal(rng, cat)
        };
        // PostgreSQL 18: virtual columns, expanded into every query
        // that reads them (not in partitioned tables here: a partition
        // must declare them as its parent does). Only of types without
        // a length or precision: a value that does not fit fails the
        // query that reads it (22001), where a stored one fails the
        // INSERT.
        let is_virtual = schema.features.virtual_generated_columns
            && !partitioned
            && !ty.name.contains('(')
            && rng.random_bool(0.5);
        if is_virtual {
            self.facts.virtual_generated.push(cname.to_string());
            format!(" GENERATED ALWAYS AS ({}) VIRTUAL", sql(&e))
        } else {
            format!(" GENERATED ALWAYS AS ({}) STORED", sql(&e))
        }
    }

    /// The column constraints of own column `k` (COLLATE, NOT NULL,
    /// DEFAULT, UNIQUE), as far as its table's placement allows them.
    fn column_constraints(
        &mut self,
        rng: &mut Rng,
        shape: &TableShape,
        k: usize,
        generated: bool,
        cname: &str,
        ty: &PgType,
    ) -> String {
        let mut def = String::new();
        let distributed = shape.distributed;
        // Co-located distribution columns must have one collation.
        if ty.category == Category::Text && !(distributed && k == 0) && rng.random_bool(0.2) {
            def.push_str(if rng.random_bool(0.5) {
                " COLLATE \"C\""
            } else {
                " COLLATE \"POSIX\""
            });
        }
        if rng.random_bool(0.15) {
            def.push_str(" NOT NULL");
            self.facts.not_null.push(cname.to_string());
        }
        // A distributed row needs a value in its distribution column.
        let distribution_column = distributed && k == 0;
        if !generated && !distribution_column && rng.random_bool(0.2) {
            def.push_str(&format!(" DEFAULT {}", sql(&literal(rng, ty.category))));
        }
        if !shape.partitioned && (!distributed || distribution_column) && rng.random_bool(0.1) {
            if self.facts.virtual_generated.iter().any(|c| c == cname) {
                // PostgreSQL refuses unique constraints on virtual columns.
            } else {
                def.push_str(" UNIQUE");
                self.facts.unique.push(cname.to_string());
            }
        }
        def
    }

    /// Adds the table constraints: a PRIMARY KEY on the first own column
    /// (returned, for ON CONFLICT) and a CHECK.
    fn table_constraints(
        &mut self,
        rng: &mut Rng,
        schema: &PgSchema,
        shape: &TableShape,
    ) -> Option<String> {
        let mut primary_key = None;
        if !shape.partitioned && shape.parent.is_none() && rng.random_bool(0.4) {
            let pk = self.own[0].0.clone();
            self.defs.push(format!("PRIMARY KEY ({pk})"));
            self.facts.unique.push(pk.clone());
            self.facts.not_null.push(pk.clone());
            primary_key = Some(pk);
        }
        if rng.random_bool(0.25) {
            let own: Vec<TypedColumn> = self
                .all
                .iter()
                .filter(|(_, t)| DDL_CATEGORIES.contains(&t.category))
                .map(|(c, t)| TypedColumn {
                    expr: Expr::column(None, c),
                    category: t.category,
                })
                .collect();
            // Lenient: `p OR q` rejects a row only where both are false (a
            // random predicate alone is often false on every row, or constant,
            // and leaves the table empty); a share stays strict.
            let mut g = ExprGen::new(schema, false);
            let mut check = g.predicate(rng, &own, 1);
            if rng.random_bool(0.8) {
                check = Expr::binary(BinaryOp::Or, check, g.predicate(rng, &own, 1));
            }
            self.defs.push(format!("CHECK ({})", sql(&check)));
        }
        primary_key
    }
}

/// Creates the partitions of table `parent`, partitioned by `method` (0:
/// range, 1: list, else hash); each that succeeds is `parent` under its
/// own name in the schema.
fn create_partitions(
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    method: i32,
    parent: &PgTable,
) -> Result<(), ExecError> {
    let name = &parent.name;
    let bounds: Vec<&str> = match method {
        0 => vec!["FROM (MINVALUE) TO (0)", "FROM (0) TO (5)", "DEFAULT"],
        1 => vec!["IN (0, 1, 2)", "IN (3, 4, NULL)", "DEFAULT"],
        _ => vec![
            "WITH (MODULUS 2, REMAINDER 0)",
            "WITH (MODULUS 2, REMAINDER 1)",
        ],
    };
    for (k, bound) in bounds.iter().enumerate() {
        let part = format!("{name}_p{k}");
        let for_values = if *bound == "DEFAULT" {
            "DEFAULT".to_string()
        } else {
            format!("FOR VALUES {bound}")
        };
        let stmt = format!("CREATE TABLE {part} PARTITION OF {name} {for_values}");
        if out.run(StatementKind::CreateTable, stmt)? {
            schema.relations.push(PgTable {
                name: part,
                ..parent.clone()
            });
        }
    }
    Ok(())
}
