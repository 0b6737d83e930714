//! The child's side: its main loop, which rebuilds the provider and the
//! oracles once and runs the databases its parent asks for, and the
//! [`Progress`] that reports through the flight recorder and stdout.

use super::*;

/// Where a database run in the child reports: counts and the check in
/// progress in the flight recorder; statement shapes (when profiling)
/// sent every [`REPORT_EVERY`].
struct ToParent<'a> {
    out: &'a mut dyn Write,
    recorder: &'a FlightRecorder,
    shapes: ShapeTimes,
    last_report: Instant,
    /// Checks counted in this database, and the most allowed.
    counted: u64,
    budget: Option<u64>,
    /// A message could not be written: the parent is gone.
    broken: bool,
}

impl ToParent<'_> {
    fn report(&mut self) {
        self.last_report = Instant::now();
        if self.shapes.is_empty() {
            return;
        }
        let shapes = std::mem::take(&mut self.shapes);
        if send(self.out, &FromChild::Shapes(shapes)).is_err() {
            self.broken = true;
        }
    }
}

impl Progress for ToParent<'_> {
    fn should_stop(&self) -> bool {
        self.broken
            || self.recorder.stop_requested()
            || self.budget.is_some_and(|b| self.counted >= b)
    }
    fn check(&mut self, oracle: usize, nonempty: bool) {
        self.counted += 1;
        self.recorder.count_check(oracle, nonempty);
    }
    fn skipped(&mut self) {
        self.recorder.count_skipped();
    }
    fn statements(&mut self, count: u64, dbms_time: Duration) {
        self.recorder.count_statements(
            count,
            u64::try_from(dbms_time.as_nanos()).unwrap_or(u64::MAX),
        );
    }
    fn shapes(&mut self, shapes: ShapeTimes) {
        if shapes.is_empty() {
            return;
        }
        for (shape, (n, t)) in shapes {
            let e = self.shapes.entry(shape).or_default();
            e.0 += n;
            e.1 += t;
        }
        if self.last_report.elapsed() >= REPORT_EVERY {
            self.report();
        }
    }
    fn plans(&mut self, new: u64) {
        self.recorder.count_plans(new);
    }
    fn check_begins(&mut self, check: u64, oracle: &str) {
        self.recorder.record(
            crate::runner::recorder::Tag::Check,
            &[&check.to_le_bytes(), oracle.as_bytes()],
        );
    }
    fn warn(&mut self, what: String) {
        if send(self.out, &FromChild::Warning(what)).is_err() {
            self.broken = true;
        }
    }
}

fn send(out: &mut dyn Write, message: &FromChild) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

/// The child's main loop: runs the databases its parent asks for until
/// its stdin closes.
pub fn serve(catalog: &Catalog) -> anyhow::Result<()> {
    let recorder = Arc::new(
        FlightRecorder::inherited()
            .context("cannot map the flight recorder (is this process started by lancet?)")?,
    );
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut input = io::stdin().lock();
    let mut line = String::new();
    input
        .read_line(&mut line)
        .context("reading the start message")?;
    let Ok(ToChild::Start(start)) = serde_json::from_str::<ToChild>(&line) else {
        anyhow::bail!("the first message to a database runner must be its start");
    };
    let setup = match ChildSetup::new(catalog, &start, &recorder) {
        Ok(s) => s,
        Err(e) => {
            send(&mut out, &FromChild::Failed(format!("{e:#}")))?;
            return Ok(());
        }
    };
    send(
        &mut out,
        &FromChild::Ready {
            dbms_version: setup.dbms_version.clone(),
        },
    )?;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let Ok(ToChild::Run {
            thread,
            database,
            budget,
        }) = serde_json::from_str::<ToChild>(&line)
        else {
            anyhow::bail!("a database runner got a message it does not understand");
        };
        let reply = setup.run(&start, &recorder, &mut out, thread, database, budget);
        send(&mut out, &reply)?;
    }
}

/// What a child builds once: the provider (in-process), its databases
/// with the recorder and planted fault, and the oracles.
struct ChildSetup {
    databases: Databases,
    oracles: OracleSet,
    dbms_version: String,
    fault: Option<lancet_core::fault::Fault>,
}

impl ChildSetup {
    fn new(
        catalog: &Catalog,
        start: &ChildStart,
        recorder: &Arc<FlightRecorder>,
    ) -> anyhow::Result<ChildSetup> {
        let program = &start.program;
        if let Some(bytes) = program.memory_limit {
            lancet_engine::isolation::limit_memory(bytes);
        }
        let provider = catalog.provider(
            &program.dbms,
            &ProviderOptions {
                expected_errors: program.expected_errors.clone(),
                library: program.library.clone(),
                ..ProviderOptions::default()
            },
        )?;
        let dbms_version = provider.version()?;
        let databases = Databases::new(Arc::from(provider), RunToken::new(), None);
        let fault = match &start.fault {
            Some(name) => Some(
                lancet_oracles::fault(name)
                    .with_context(|| format!("unknown planted fault '{name}'"))?,
            ),
            None => None,
        };
        databases.set_fault(fault.clone());
        let recorder = Arc::clone(recorder);
        databases.set_wrapper(Some(Arc::new(move |conn| {
            Box::new(RecordingConnection::new(conn, Arc::clone(&recorder)))
        })));
        let mut oracles = Vec::new();
        for (name, weight) in &start.oracles {
            let oracle = lancet_oracles::by_name(name)
                .with_context(|| format!("unknown oracle '{name}'"))?;
            oracles.push((oracle, *weight));
        }
        Ok(ChildSetup {
            databases,
            oracles: OracleSet::new(oracles),
            dbms_version,
            fault,
        })
    }

    fn run(
        &self,
        start: &ChildStart,
        recorder: &FlightRecorder,
        out: &mut dyn Write,
        thread: u32,
        database: u64,
        budget: Option<u64>,
    ) -> FromChild {
        recorder.clear();
        let mut scratch = match self.databases.create(Purpose::Worker, thread, database) {
            Ok(s) => s,
            Err(e) => return FromChild::Failed(format!("cannot create a database: {e:#}")),
        };
        let plan = DatabasePlan {
            provider: self.databases.provider(),
            oracles: &self.oracles,
            source: FindingSource {
                provider: self.databases.provider(),
                dbms_version: &self.dbms_version,
                fault: self.fault.clone(),
            },
            seed: start.seed,
            thread,
            database,
            checks_per_database: start.checks_per_database,
            log_dir: start.log_dir.as_deref(),
            profile_shapes: start.profile_shapes,
        };
        let mut progress = ToParent {
            out,
            recorder,
            shapes: ShapeTimes::new(),
            last_report: Instant::now(),
            counted: 0,
            budget,
            broken: false,
        };
        let end = run_database(&plan, &mut progress, scratch.session());
        drop(scratch);
        progress.report();
        match end {
            Ok(DatabaseEnd::Done { cases }) => FromChild::Done { cases: Some(cases) },
            Ok(DatabaseEnd::Stopped) => FromChild::Done { cases: None },
            Ok(DatabaseEnd::Found(finding)) => FromChild::Found(finding),
            Ok(DatabaseEnd::Lost(e)) => FromChild::Failed(e),
            Err(e) => FromChild::Failed(format!("{e:#}")),
        }
    }
}
