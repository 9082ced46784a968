//! The processes an operator starts are the ones the workspace builds (ARCHITECTURE.md,
//! "Processes"): every `Procfile` process is a `docker-compose.yml` service running the same
//! binary, and every service running the platform's image is a Procfile process (the rest of
//! compose is infrastructure: Postgres, Redis); every Procfile command names a binary of the
//! workspace; every queue family has its `worker-<family>` process; the Dockerfile copies the
//! Procfile's binaries, and only those, without naming them; every setting docs/configuration.md documents
//! reaches the compose services that read it. Plain tests, but the last: `scripts/run` stopped by
//! SIGTERM leaves no process behind (it builds the debug binaries and needs Postgres and Redis).

use std::{
    collections::{BTreeMap, BTreeSet},
    io::{BufRead, BufReader, Read},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::Value;
use uuid::Uuid;

/// The workspace's root folder (this crate is `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn read(file: &str) -> String {
    let path = root().join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The file name of a command's program: `./target/release/worker-system --x` is
/// `worker-system`.
fn program(command: &str) -> String {
    let first = command.split_whitespace().next().unwrap_or_default();
    Path::new(first)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The Procfile's processes: name → the program its command runs.
fn procfile() -> BTreeMap<String, String> {
    let mut processes = BTreeMap::new();
    for (number, line) in read("Procfile").lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, command) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("Procfile line {}: not `name: command`", number + 1));
        let runs = program(command);
        assert!(
            !name.trim().is_empty() && !runs.is_empty(),
            "Procfile line {}: not `name: command`",
            number + 1
        );
        let previous = processes.insert(name.trim().to_owned(), runs);
        assert!(previous.is_none(), "Procfile names {name} twice");
    }
    processes
}

/// The bin targets of the workspace's packages, as `cargo metadata` reports them (so `[[bin]]`
/// sections, `src/main.rs` and `src/bin/*.rs` count alike).
fn workspace_bins() -> BTreeSet<String> {
    workspace_bin_targets()
        .into_iter()
        .map(|(_, bin)| bin)
        .collect()
}

/// Each bin target of the workspace with its package: (package, bin).
fn workspace_bin_targets() -> Vec<(String, String)> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata answers");
    let mut bins = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let package_name = package["name"].as_str().expect("a package's name");
        for target in package["targets"].as_array().expect("targets") {
            let is_bin = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k.as_str() == Some("bin")));
            if is_bin && let Some(name) = target["name"].as_str() {
                bins.push((package_name.to_owned(), name.to_owned()));
            }
        }
    }
    bins
}

/// One service of a compose file.
#[derive(Debug, Default, PartialEq, Eq)]
struct Service {
    /// It has a `build:` section.
    builds: bool,
    image: Option<String>,
    /// The program of its `command:`, when it has one.
    program: Option<String>,
    /// Its `environment:`, anchored mappings merged in (`<<: *name`, `environment: *name`):
    /// each variable with its value as written, `None` for one written without a value (compose
    /// passes it on from the shell or .env, or leaves it unset).
    environment: BTreeMap<String, Option<String>>,
    /// It has an `env_file:`, whose variables this parser does not read.
    env_file: bool,
}

/// One entry of an environment block, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EnvEntry {
    /// `<<: *name`: the entries of the mapping anchored as `&name`.
    Merge(String),
    /// `NAME: value` or `- NAME=value`; `NAME:` and `- NAME` have no value.
    Var(String, Option<String>),
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The entry a line of an environment block writes.
fn env_entry(number: usize, content: &str) -> EnvEntry {
    let (name, value) = if let Some(item) = content.strip_prefix('-') {
        let item = unquote(item);
        match item.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value)),
            None => (item.trim(), None),
        }
    } else {
        let (key, value) = content
            .split_once(':')
            .unwrap_or_else(|| unreadable(number, "`NAME: value`", content));
        let value = value.trim();
        if unquote(key) == "<<" {
            let anchor = value
                .strip_prefix('*')
                .unwrap_or_else(|| unreadable(number, "`<<: *anchor`", content));
            return EnvEntry::Merge(anchor.trim().to_owned());
        }
        let value = match value {
            "" | "~" | "null" => None,
            value => Some(unquote(value)),
        };
        (unquote(key), value)
    };
    if !is_variable_name(name) {
        unreadable(number, "a variable's name", content);
    }
    EnvEntry::Var(name.to_owned(), value.map(str::to_owned))
}

/// The variables of `entries`, anchored mappings merged in as YAML merges them: a variable of
/// the entries' own wins over a merged one, an earlier merge over a later one.
fn resolve_environment(
    entries: &[EnvEntry],
    anchors: &BTreeMap<String, Result<Vec<EnvEntry>, usize>>,
    depth: usize,
) -> BTreeMap<String, Option<String>> {
    assert!(
        depth < 16,
        "docker-compose.yml: anchors merge each other in a loop"
    );
    let mut merged = BTreeMap::new();
    let mut own = BTreeMap::new();
    for entry in entries {
        match entry {
            EnvEntry::Merge(name) => {
                let anchored = match anchors.get(name) {
                    Some(Ok(anchored)) => anchored,
                    Some(Err(line)) => panic!(
                        "docker-compose.yml merges *{name} into an environment, but the mapping \
                         &{name} is not a flat list of variables (line {line})"
                    ),
                    None => panic!("docker-compose.yml merges *{name}, which names no mapping"),
                };
                for (variable, value) in resolve_environment(anchored, anchors, depth + 1) {
                    merged.entry(variable).or_insert(value);
                }
            }
            EnvEntry::Var(variable, value) => {
                let previous = own.insert(variable.clone(), value.clone());
                assert!(
                    previous.is_none(),
                    "docker-compose.yml sets {variable} twice in one mapping"
                );
            }
        }
    }
    merged.extend(own);
    merged
}

/// `line` without its comment: a `#` at the start or after a space, outside quotes.
fn without_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return &line[..at],
            _ => {}
        }
        previous = c;
    }
    line
}

fn unquote(value: &str) -> &str {
    let value = value.trim();
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// The services of a compose file by name.
///
/// A small line parser rather than a YAML library: none is in the workspace's lock file, and
/// one check does not justify a new dependency. It follows the block mappings compose files are
/// written in (space indentation, `#` comments) down to each service's own keys, and reads a
/// `command:` written as a flow list (`["worker-system"]`), a block list or a plain string, and
/// an `environment:` written as a block mapping or list, or as an alias (`*name`), merging the
/// top-level mappings anchored as `&name` (`x-env: &name`) that it names.
/// What it does not follow fails the test naming the line, rather than passing by misreading.
fn compose_services(text: &str) -> BTreeMap<String, Service> {
    let mut services: BTreeMap<String, Service> = BTreeMap::new();
    // Each service's environment entries as written, merged once every anchor is known.
    let mut written_env: BTreeMap<String, Vec<EnvEntry>> = BTreeMap::new();
    // Top-level anchored mappings: their entries, or the line that shows one is not a flat list
    // of variables (an error only if an environment merges it).
    let mut anchors: BTreeMap<String, Result<Vec<EnvEntry>, usize>> = BTreeMap::new();
    // The anchored mapping being read, and the indentation of its entries.
    let mut anchored: Option<(String, Option<usize>)> = None;
    let mut in_services = false;
    let mut service_indent = None;
    let mut key_indent = None;
    let mut current: Option<String> = None;
    // After `command:` with nothing on its line: the list follows on the next lines.
    let mut command_list = false;
    // After `environment:` with nothing on its line: its entries follow, at this indentation
    // (known from the first).
    let mut environment: Option<Option<usize>> = None;
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        let line = without_comment(line).trim_end();
        let content = line.trim_start();
        if content.is_empty() {
            continue;
        }
        let indent = line.len() - content.len();
        assert!(
            !line[..indent].contains('\t'),
            "docker-compose.yml line {number}: indented with a tab"
        );
        if indent == 0 {
            in_services = content == "services:";
            current = None;
            anchored = content
                .split_once(':')
                .and_then(|(_, value)| value.trim().strip_prefix('&'))
                .map(|name| (name.trim().to_owned(), None));
            if let Some((name, _)) = &anchored {
                anchors.insert(name.clone(), Ok(Vec::new()));
            }
            continue;
        }
        if let Some((name, entry_indent)) = anchored.as_mut() {
            let entry_indent = *entry_indent.get_or_insert(indent);
            let read = anchors.get_mut(name).expect("the anchor is recorded");
            if indent != entry_indent {
                *read = Err(number);
            } else if let Ok(entries) = read {
                entries.push(env_entry(number, content));
            }
            continue;
        }
        if !in_services {
            continue;
        }
        let service_indent = *service_indent.get_or_insert(indent);
        assert!(
            indent >= service_indent,
            "docker-compose.yml line {number}: not indented as a service or below one"
        );
        if indent == service_indent {
            let name = content
                .strip_suffix(':')
                .map(|name| unquote(name).to_owned())
                .unwrap_or_else(|| unreadable(number, "`<service>:`", content));
            assert!(
                !services.contains_key(&name),
                "docker-compose.yml names the service {name} twice"
            );
            services.insert(name.clone(), Service::default());
            current = Some(name);
            key_indent = None;
            command_list = false;
            environment = None;
            continue;
        }
        let Some(name) = current.as_ref() else {
            panic!("docker-compose.yml line {number}: outside any service");
        };
        let service = services
            .get_mut(name)
            .expect("the current service is recorded");
        let key_indent = *key_indent.get_or_insert(indent);
        if command_list {
            // A block list may sit at its key's indentation or below it.
            if let Some(item) = content.strip_prefix('-')
                && indent >= key_indent
            {
                if service.program.is_none() {
                    service.program = Some(program(unquote(item)));
                }
                continue;
            }
            command_list = false;
        }
        if let Some(entry_indent) = environment.as_mut() {
            // Entries below the key, or a block list at its indentation.
            if indent > key_indent || (indent == key_indent && content.starts_with('-')) {
                let entry_indent = *entry_indent.get_or_insert(indent);
                if indent != entry_indent {
                    unreadable(number, "an environment entry", content);
                }
                written_env
                    .entry(name.clone())
                    .or_default()
                    .push(env_entry(number, content));
                continue;
            }
            environment = None;
        }
        if indent != key_indent {
            // Inside another of the service's keys (depends_on, healthcheck, ...).
            continue;
        }
        let (key, value) = content
            .split_once(':')
            .unwrap_or_else(|| unreadable(number, "`<key>: <value>`", content));
        let value = value.trim();
        match unquote(key) {
            "build" => service.builds = true,
            "image" => service.image = Some(unquote(value).to_owned()),
            "env_file" => service.env_file = true,
            "environment" if value.is_empty() => environment = Some(None),
            "environment" => {
                let anchor = value.strip_prefix('*').unwrap_or_else(|| {
                    unreadable(number, "`environment:` with a block or `*anchor`", value)
                });
                written_env
                    .entry(name.clone())
                    .or_default()
                    .push(EnvEntry::Merge(anchor.trim().to_owned()));
            }
            "command" if value.is_empty() => command_list = true,
            "command" => {
                let first = match value.strip_prefix('[') {
                    Some(list) => {
                        let list = list
                            .strip_suffix(']')
                            .unwrap_or_else(|| unreadable(number, "a list on one line", value));
                        list.split(',').next().unwrap_or_default()
                    }
                    None => value,
                };
                service.program = Some(program(unquote(first)));
            }
            _ => {}
        }
    }
    for (name, entries) in written_env {
        let service = services.get_mut(&name).expect("a service with entries");
        service.environment = resolve_environment(&entries, &anchors, 0);
    }
    services
}

/// Fails the test on a line of docker-compose.yml that [`compose_services`] does not follow.
fn unreadable(number: usize, expected: &str, content: &str) -> ! {
    panic!("docker-compose.yml line {number}: expected {expected}, got {content:?}")
}

/// The services that run the platform's image (one that a service builds), by name, with the
/// program each runs.
fn platform_services(services: &BTreeMap<String, Service>) -> BTreeMap<&str, Option<&str>> {
    let built: BTreeSet<&str> = services
        .values()
        .filter(|s| s.builds)
        .filter_map(|s| s.image.as_deref())
        .collect();
    assert!(
        services.values().any(|s| s.builds),
        "no docker-compose.yml service builds the platform's image"
    );
    services
        .iter()
        .filter(|(_, s)| s.builds || s.image.as_deref().is_some_and(|i| built.contains(i)))
        .map(|(name, s)| (name.as_str(), s.program.as_deref()))
        .collect()
}

#[test]
fn every_procfile_process_is_a_compose_service_running_the_same_binary() {
    let procfile = procfile();
    let services = compose_services(&read("docker-compose.yml"));
    let platform = platform_services(&services);
    assert_eq!(
        procfile.get("api").map(String::as_str),
        Some("villa-api"),
        "the Procfile runs the API as `api`"
    );
    let not_in_compose: Vec<&String> = procfile
        .keys()
        .filter(|name| !platform.contains_key(name.as_str()))
        .collect();
    let not_in_procfile: Vec<&&str> = platform
        .keys()
        .filter(|name| !procfile.contains_key(**name))
        .collect();
    assert!(
        not_in_compose.is_empty() && not_in_procfile.is_empty(),
        "Procfile processes without a docker-compose.yml service: {not_in_compose:?}; \
         docker-compose.yml services of the platform's image that the Procfile lacks: \
         {not_in_procfile:?}"
    );
    for (name, program) in &procfile {
        assert_eq!(
            platform[name.as_str()],
            Some(program.as_str()),
            "docker-compose.yml service {name} does not run the Procfile's binary"
        );
    }
}

/// The fake PMS stands in for Hostaway in development and tests only: operators run the
/// Procfile (and compose) in production, so neither may start it.
#[test]
fn production_never_starts_the_fake_pms() {
    let bins = workspace_bins();
    assert!(bins.contains("fake-pms"), "cargo metadata lists {bins:?}");
    for (name, program) in procfile() {
        assert_ne!(
            program, "fake-pms",
            "Procfile process {name} runs the fake PMS"
        );
    }
    let services = compose_services(&read("docker-compose.yml"));
    for (name, program) in platform_services(&services) {
        assert_ne!(
            program,
            Some("fake-pms"),
            "compose service {name} runs the fake PMS"
        );
    }
}

#[test]
fn every_procfile_command_runs_a_binary_of_the_workspace() {
    let bins = workspace_bins();
    assert!(bins.contains("villa-api"), "cargo metadata lists {bins:?}");
    for (name, program) in procfile() {
        assert!(
            bins.contains(&program),
            "Procfile process {name} runs {program}, which no workspace package declares as a \
             binary (they are {bins:?})"
        );
    }
}

#[test]
fn every_queue_family_has_its_worker_process_and_every_worker_its_queue() {
    let procfile = procfile();
    for queue in jobs::Queue::ALL {
        let worker = format!("worker-{}", queue.name());
        assert_eq!(
            procfile.get(&worker),
            Some(&worker),
            "queue {} needs the Procfile process `{worker}: ./target/release/{worker}`",
            queue.name()
        );
    }
    for name in procfile.keys() {
        let family = name.strip_prefix("worker-");
        assert!(
            name == "api"
                || name == "scheduler"
                || family.is_some_and(|f| jobs::Queue::parse(f).is_some()),
            "Procfile process {name} is neither api, the scheduler nor the worker of a queue \
             declared in jobs/src/queue.rs"
        );
    }
}

#[test]
fn the_dockerfile_copies_the_binaries_without_naming_them() {
    let dockerfile = read("Dockerfile");
    for program in procfile().values() {
        assert!(
            !dockerfile.contains(&format!("release/{program}")),
            "the Dockerfile names {program}: copy every binary the workspace builds instead"
        );
    }
}

/// The parser reads what compose files are written with, and keeps infrastructure apart.
#[test]
fn the_compose_parser_reads_services_keys_and_commands() {
    let text = r#"
x-env: &env
  A: b # a comment
  B: ${B:-x}
  C:
x-worker-env: &worker-env
  <<: *env
  A: overridden-below
  D: "9"
x-healthcheck: &healthcheck
  test: ["CMD", "true"]
  retries:
    - not a flat list of variables
services:
  # the database
  postgres:
    image: "postgres:15"
    command: ["postgres", "-c", "fsync=off"]
  api:
    build: .
    image: villa-platform
    command: ["villa-api"]   # the API
    environment:
      <<: *env
      command: not-a-key-of-the-service
  worker-x:
    image: villa-platform
    command:
      - "/usr/local/bin/worker-x"
      - --flag
    environment:
      <<: *worker-env
      A: b
    depends_on:
      api: { condition: service_healthy }
  worker-y:
    image: 'villa-platform'
    command: worker-y --verbose
    env_file: [.env]
    environment:
    - E=1
    - F
  shell:
    image: "busybox#1"
volumes:
  data:
"#;
    let services = compose_services(text);
    let names: Vec<&str> = services.keys().map(String::as_str).collect();
    assert_eq!(names, ["api", "postgres", "shell", "worker-x", "worker-y"]);
    let variables = |service: &str| -> Vec<(String, Option<String>)> {
        services[service].environment.clone().into_iter().collect()
    };
    let some = |value: &str| Some(value.to_owned());
    assert_eq!(
        variables("api"),
        [
            ("A".to_owned(), some("b")),
            ("B".to_owned(), some("${B:-x}")),
            ("C".to_owned(), None),
            ("command".to_owned(), some("not-a-key-of-the-service")),
        ]
    );
    assert_eq!(
        variables("worker-x"),
        [
            ("A".to_owned(), some("b")),
            ("B".to_owned(), some("${B:-x}")),
            ("C".to_owned(), None),
            ("D".to_owned(), some("9")),
        ]
    );
    assert_eq!(
        variables("worker-y"),
        [("E".to_owned(), some("1")), ("F".to_owned(), None)]
    );
    assert!(services["worker-y"].env_file && !services["api"].env_file);
    assert!(variables("postgres").is_empty());
    assert_eq!(services["postgres"].program.as_deref(), Some("postgres"));
    assert_eq!(services["shell"].image.as_deref(), Some("busybox#1"));
    let platform = platform_services(&services);
    assert_eq!(
        platform,
        BTreeMap::from([
            ("api", Some("villa-api")),
            ("worker-x", Some("worker-x")),
            ("worker-y", Some("worker-y")),
        ])
    );
}

/// The settings rows of the documented configuration's tables (`docs/configuration.md`, the
/// document store's table included): the backticked names of the first column, and the
/// backticked values of the last, the defaults (given in the order of the names where a row
/// names several: `` `PMS_RATE_LIMIT`, `PMS_RATE_WINDOW_SECS` `` with `` `15`, `10` ``).
fn documented_rows() -> Vec<(Vec<String>, Vec<String>)> {
    fn quoted(cell: &str) -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect()
    }
    let section = read("docs/configuration.md");
    let mut rows = Vec::new();
    for line in section.lines().filter(|line| line.starts_with('|')) {
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        let first = cells.first().copied().unwrap_or_default().trim();
        if first == "Variable" || first.chars().all(|c| c == '-' || c == ':') {
            continue;
        }
        let names = quoted(first);
        assert!(
            !names.is_empty() && names.iter().all(|name| is_variable_name(name)),
            "docs/configuration.md's row does not start with `VARIABLE`s: {line}"
        );
        let last = cells.last().copied().unwrap_or_default();
        rows.push((names, quoted(last)));
    }
    rows
}

/// The variables of the documented configuration (`docs/configuration.md`): the names in the
/// first column of every table row (the document store's table included).
fn documented_settings() -> BTreeSet<String> {
    documented_rows()
        .into_iter()
        .flat_map(|(names, _)| names)
        .collect()
}

/// Variables compose gives a value of its own, whatever the operator sets: they name compose's
/// services (Postgres, Redis), its volume and the ports its containers listen on.
const COMPOSE_FIXED: [&str; 5] = [
    "DATABASE_URL",
    "REDIS_URL",
    "STORAGE_LOCAL_DIR",
    "PORT",
    "METRICS_PORT",
];

/// Whether the platform process of compose service `service` reads `variable`: each reads the
/// settings every process shares, but the two ports: `PORT` is the API's listen port,
/// `METRICS_PORT` the metrics listener of the workers and the scheduler.
fn reads(service: &str, variable: &str) -> bool {
    match variable {
        "PORT" => service == "api",
        "METRICS_PORT" => service != "api",
        _ => true,
    }
}

/// What an operator sets (in the shell or `.env`) reaches the processes: a variable the docs
/// documents is given to every compose service whose process reads it, passed on (no value, or
/// a value interpolating the variable itself) unless compose fixes it; and compose gives no
/// variable the docs do not document.
#[test]
fn every_documented_setting_reaches_the_compose_services_that_read_it() {
    let documented = documented_settings();
    for known in [
        "DATABASE_URL",
        "PMS_RATE_LIMIT",
        "S3_BUCKET",
        "AWS_SSE_KMS_KEY_ID",
    ] {
        assert!(
            documented.contains(known),
            "docs/configuration.md's tables do not list {known}: {documented:?}"
        );
    }
    let services = compose_services(&read("docker-compose.yml"));
    let platform = platform_services(&services);
    // Problem → the services it concerns.
    let mut problems: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in platform.keys() {
        let service = &services[*name];
        if service.env_file {
            problems
                .entry("has an env_file, which this test does not read (docker-compose.yml lists the settings instead)".to_owned())
                .or_default()
                .push(name);
        }
        for variable in documented.iter().filter(|v| reads(name, v)) {
            let problem = match service.environment.get(variable) {
                None => format!("{variable}: not given"),
                Some(Some(value))
                    if !COMPOSE_FIXED.contains(&variable.as_str())
                        && !value.contains(&format!("${{{variable}"))
                        && !value.contains(&format!("${variable}")) =>
                {
                    format!("{variable}: given {value:?}, whatever the operator sets")
                }
                Some(_) => continue,
            };
            problems.entry(problem).or_default().push(name);
        }
        for variable in service.environment.keys() {
            if !documented.contains(variable) {
                problems
                    .entry(format!(
                        "{variable}: given, but docs/configuration.md does not document it"
                    ))
                    .or_default()
                    .push(name);
            }
        }
    }
    let problems: Vec<String> = problems
        .into_iter()
        .map(|(problem, services)| format!("  {problem} ({})", services.join(", ")))
        .collect();
    assert!(
        problems.is_empty(),
        "docker-compose.yml and docs/configuration.md disagree:\n{}",
        problems.join("\n")
    );
}

/// One stage of a Dockerfile: what the runtime image check needs of it.
#[derive(Debug, Default)]
struct Stage {
    name: Option<String>,
    /// Its last `WORKDIR`, absolute.
    workdir: Option<String>,
    /// Its `RUN` commands (shell form).
    runs: Vec<String>,
    /// Its `COPY --from=<stage>` instructions: the stage, the sources, the destination.
    copies_from: Vec<(String, Vec<String>, String)>,
}

/// The stages of a Dockerfile, in order: instructions with their continuation lines joined,
/// comment lines left out (as Docker reads them).
fn dockerfile_stages(text: &str) -> Vec<Stage> {
    let mut instructions = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        match line.trim_end().strip_suffix('\\') {
            Some(part) => {
                pending.push_str(part);
                pending.push(' ');
            }
            None => {
                pending.push_str(line.trim_end());
                instructions.push(std::mem::take(&mut pending));
            }
        }
    }
    assert!(
        pending.is_empty(),
        "the Dockerfile ends inside an instruction"
    );
    let mut stages: Vec<Stage> = Vec::new();
    for instruction in instructions {
        let instruction = instruction.trim();
        let (keyword, rest) = instruction
            .split_once(char::is_whitespace)
            .unwrap_or((instruction, ""));
        let rest = rest.trim();
        let keyword = keyword.to_ascii_uppercase();
        if keyword == "FROM" {
            let words: Vec<&str> = rest.split_whitespace().collect();
            let name = match words.as_slice() {
                [_, as_, name] if as_.eq_ignore_ascii_case("as") => Some((*name).to_owned()),
                _ => None,
            };
            stages.push(Stage {
                name,
                ..Stage::default()
            });
            continue;
        }
        let stage = stages
            .last_mut()
            .unwrap_or_else(|| panic!("the Dockerfile has {keyword} before any FROM"));
        match keyword.as_str() {
            "WORKDIR" => {
                assert!(
                    rest.starts_with('/'),
                    "the Dockerfile's WORKDIR {rest} is relative"
                );
                stage.workdir = Some(rest.to_owned());
            }
            "RUN" => {
                assert!(
                    !rest.starts_with('['),
                    "the Dockerfile has a RUN in exec form, which this test does not follow: {rest}"
                );
                stage.runs.push(rest.to_owned());
            }
            "COPY" => {
                let words: Vec<&str> = rest.split_whitespace().collect();
                let from = words.iter().find_map(|w| w.strip_prefix("--from="));
                let paths: Vec<&str> = words
                    .iter()
                    .copied()
                    .filter(|w| !w.starts_with("--"))
                    .collect();
                if let (Some(from), [sources @ .., destination]) = (from, paths.as_slice()) {
                    stage.copies_from.push((
                        from.to_owned(),
                        sources.iter().map(|s| (*s).to_owned()).collect(),
                        (*destination).to_owned(),
                    ));
                }
            }
            _ => {}
        }
    }
    stages
}

/// Stands in for `cargo build` in a sandbox: leaves at the top of `target/<profile>/` an
/// executable for each binary cargo would build for the arguments (`--bin`, else the packages'
/// of `-p`, else every one of the workspace), next to what cargo leaves there too (dependencies,
/// build scripts, metadata); a `--bin` no package declares fails as cargo does. Its sibling file
/// `bins` lists the workspace's `package bin` pairs.
const STUB_CARGO: &str = r#"#!/bin/sh
set -eu
[ "${1:-}" = build ] || { echo "the stub cargo only builds, not: $*" >&2; exit 2; }
shift
profile=debug; bins=; packages=
while [ $# -gt 0 ]; do
  case $1 in
    --release|-r) profile=release ;;
    --profile) shift; profile=$1 ;;
    --profile=*) profile=${1#--profile=} ;;
    --bin) shift; bins="$bins $1" ;;
    --bin=*) bins="$bins ${1#--bin=}" ;;
    -p|--package) shift; packages="$packages $1" ;;
    --package=*) packages="$packages ${1#--package=}" ;;
    --workspace|--all|--bins|--locked|--frozen|--offline|-q|--quiet|-v|--verbose) ;;
    *) echo "the stub cargo does not know $1" >&2; exit 2 ;;
  esac
  shift
done
list="$(dirname "$0")/bins"
for bin in $bins; do
  grep -q " $bin\$" "$list" || { echo "error: no bin target named \`$bin\`" >&2; exit 101; }
done
out=target/$profile
mkdir -p "$out/deps" "$out/build/domain-0123456789abcdef"
printf '#!/bin/sh\n' > "$out/deps/villa_api-0123456789abcdef"
printf '#!/bin/sh\n' > "$out/build/domain-0123456789abcdef/build-script-build"
chmod +x "$out/deps/villa_api-0123456789abcdef" "$out/build/domain-0123456789abcdef/build-script-build"
: > "$out/libdomain.rlib"
: > "$out/villa-api.d"
while read -r package bin; do
  selected=
  if [ -n "$bins" ]; then
    case " $bins " in *" $bin "*) selected=1 ;; esac
  elif [ -n "$packages" ]; then
    case " $packages " in *" $package "*) selected=1 ;; esac
  else
    selected=1
  fi
  if [ -n "$selected" ]; then
    printf '#!/bin/sh\n' > "$out/$bin"
    chmod +x "$out/$bin"
  fi
done < "$list"
"#;

/// Runs the `RUN` commands of `stage` in `sandbox`, which holds `procfile` as `Procfile`, with
/// [`STUB_CARGO`] as cargo (and apt-get and rustup doing nothing); what failed, if one did.
fn run_build_stage(stage: &Stage, procfile: &str, sandbox: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let stub = sandbox.join(".stub");
    std::fs::create_dir_all(&stub).expect("the sandbox");
    std::fs::write(sandbox.join("Procfile"), procfile).expect("the sandbox's Procfile");
    let bins: String = workspace_bin_targets()
        .into_iter()
        .map(|(package, bin)| format!("{package} {bin}\n"))
        .collect();
    std::fs::write(stub.join("bins"), bins).expect("the stub's list");
    for (tool, script) in [
        ("cargo", STUB_CARGO),
        ("apt-get", "#!/bin/sh\n"),
        ("rustup", "#!/bin/sh\n"),
    ] {
        let path = stub.join(tool);
        std::fs::write(&path, script).expect("a stub");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        stub.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for run in &stage.runs {
        let output = Command::new("sh")
            .arg("-c")
            .arg(run)
            .current_dir(sandbox)
            .env("PATH", &path)
            .output()
            .expect("sh runs");
        if !output.status.success() {
            return Err(format!(
                "RUN {run}\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    Ok(())
}

/// The file names the runtime stage copies from `stage` after its RUN commands ran in
/// `sandbox`: `sources` are paths in the build stage's file system, read under its WORKDIR.
fn copied_names(stage: &Stage, sources: &[String], sandbox: &Path) -> BTreeSet<String> {
    let workdir = stage.workdir.as_deref().unwrap_or("/");
    let mut names = BTreeSet::new();
    for source in sources {
        let absolute = if source.starts_with('/') {
            source.clone()
        } else {
            format!("/{source}")
        };
        let inside = absolute
            .strip_prefix(workdir)
            .filter(|rest| rest.is_empty() || rest.starts_with('/') || workdir.ends_with('/'))
            .unwrap_or_else(|| {
                panic!(
                    "the runtime stage copies {source} from outside the build stage's WORKDIR \
                     {workdir}; this test reads what the build stage leaves in its WORKDIR"
                )
            });
        let path = sandbox.join(inside.trim_start_matches('/'));
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("the copied folder") {
                let entry = entry.expect("an entry");
                names.insert(entry.file_name().to_string_lossy().into_owned());
            }
        } else if path.exists() {
            names.insert(
                path.file_name()
                    .expect("a file name")
                    .to_string_lossy()
                    .into_owned(),
            );
        } else {
            panic!("the runtime stage copies {source}, which the build stage did not make");
        }
    }
    names
}

/// The runtime image carries the processes an operator runs, the Procfile's binaries, and no
/// other (not the fake PMS, not the benchmarks): the build stage runs in a sandbox with a cargo
/// that builds what it is asked for, then what the runtime stage copies from it is compared
/// with the Procfile. A Procfile naming a binary that is not built fails the build.
#[test]
fn the_runtime_image_holds_the_procfile_binaries_and_no_other() {
    let stages = dockerfile_stages(&read("Dockerfile"));
    let runtime = stages.last().expect("the Dockerfile has a stage");
    assert!(
        !runtime.copies_from.is_empty(),
        "the Dockerfile's last stage copies nothing from a build stage"
    );
    let procfile_text = read("Procfile");
    let expected: BTreeSet<String> = procfile().into_values().collect();
    // The web console's build goes where the image's CONSOLE_DIR points; the rest are binaries.
    let (console, binaries): (Vec<_>, Vec<_>) = runtime
        .copies_from
        .iter()
        .partition(|(from, _, _)| from == "console");
    let (_, console_sources, console_destination) = console
        .first()
        .expect("the runtime image copies the web console from its stage");
    assert_eq!(console_sources, &["/console/dist/".to_owned()]);
    assert!(
        read("Dockerfile").contains(&format!(
            "ENV CONSOLE_DIR={}",
            console_destination.trim_end_matches('/')
        )),
        "the image's CONSOLE_DIR is where the console is copied ({console_destination})"
    );
    assert!(!binaries.is_empty(), "the runtime stage copies no binaries");
    for (from, sources, destination) in binaries {
        let build = stages
            .iter()
            .find(|stage| stage.name.as_deref() == Some(from.as_str()))
            .unwrap_or_else(|| panic!("COPY --from={from} names no stage of the Dockerfile"));
        let sandbox = std::env::temp_dir().join(format!("villa-dockerfile-{}", Uuid::new_v4()));
        let built = run_build_stage(build, &procfile_text, &sandbox);
        let copied = built
            .as_ref()
            .map(|()| copied_names(build, sources, &sandbox));
        let _ = std::fs::remove_dir_all(&sandbox);
        let copied = copied.unwrap_or_else(|e| panic!("the build stage failed: {e}"));
        assert_eq!(
            copied, expected,
            "the runtime image gets into {destination} what differs from the Procfile's binaries"
        );

        let ghost = format!("{procfile_text}\nghost: ./target/release/ghost-worker\n");
        let sandbox = std::env::temp_dir().join(format!("villa-dockerfile-{}", Uuid::new_v4()));
        let built = run_build_stage(build, &ghost, &sandbox);
        let _ = std::fs::remove_dir_all(&sandbox);
        assert!(
            built.is_err(),
            "the build succeeds with a Procfile naming a binary no package declares"
        );
    }
}

/// The processes running now (zombies left out) whose environment holds `marker`
/// (`NAME=value`): pid → the file name of the program each runs.
fn processes_marked(marker: &str) -> BTreeMap<u32, String> {
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let dir = entry.path();
        // A process may end while it is read: whatever cannot be read is skipped.
        let Ok(environ) = std::fs::read(dir.join("environ")) else {
            continue;
        };
        if !environ.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
            continue;
        }
        let zombie = std::fs::read_to_string(dir.join("stat"))
            .ok()
            .and_then(|stat| {
                stat.rsplit_once(')')
                    .map(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if zombie {
            continue;
        }
        let program = std::fs::read_link(dir.join("exe"))
            .ok()
            .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
            .map(|name| name.trim_end_matches(" (deleted)").to_owned())
            .unwrap_or_default();
        found.insert(pid, program);
    }
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

fn signal(pid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// A `scripts/run` started by a test, with what it needs undone when the test ends, passed or
/// not: its processes killed, its database dropped, its Redis keys and folder removed.
struct ScriptRun {
    child: Child,
    /// On every process it starts (they inherit its environment).
    marker: String,
    admin_url: String,
    database: String,
    redis_url: String,
    redis_prefix: String,
    folder: PathBuf,
    /// Its output, stdout and stderr, line by line.
    lines: mpsc::Receiver<String>,
    output: Vec<String>,
}

impl ScriptRun {
    /// The output's lines until one contains `text`; `None` if the script ended or `timeout`
    /// passed first.
    fn wait_for_line(&mut self, text: &str, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.output.push(line.clone());
                    if found {
                        return Some(line);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// The lines of output still coming within `timeout` (the last ones the processes' seds
    /// write as they end).
    fn drain(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while let Some(left) = deadline.checked_duration_since(Instant::now())
            && let Ok(line) = self.lines.recv_timeout(left)
        {
            self.output.push(line);
        }
    }

    fn output_tail(&self) -> String {
        let from = self.output.len().saturating_sub(80);
        self.output[from..].join("\n")
    }
}

impl Drop for ScriptRun {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for pid in processes_marked(&self.marker).keys() {
            signal(*pid, "KILL");
        }
        let _ = Command::new("psql")
            .arg(&self.admin_url)
            .args([
                "-qc",
                &format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.database),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Ok(mut redis) =
            redis::Client::open(self.redis_url.as_str()).and_then(|c| c.get_connection())
        {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{}*", self.redis_prefix))
                .query(&mut redis)
                .unwrap_or_default();
            if !keys.is_empty() {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(keys).query(&mut redis);
            }
        }
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// `scripts/run` over a database, a Redis prefix, ports and a folder of its own, on the debug
/// binaries (`RUN_PROFILE=debug`: it builds them, quickly once `cargo test` has built the
/// dependencies).
fn start_scripts_run() -> ScriptRun {
    let admin_url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres:postgres@127.0.0.1:5432/postgres".to_owned());
    let server = admin_url
        .rsplit_once('/')
        .map(|(server, _)| server)
        .expect("DATABASE_URL names a database");
    let id = Uuid::new_v4().simple().to_string();
    let database = format!("villa_run_{id}");
    let database_url = format!("{server}/{database}");
    let folder = std::env::temp_dir().join(format!("villa-run-{id}"));
    let redis_url = tests::shared_redis_url();
    let redis_prefix = format!("run-{id}");
    let mut command = Command::new(root().join("scripts/run"));
    // The environment cargo test was started with, so that the script's cargo builds as that one
    // did (RUSTFLAGS, CARGO_TARGET_DIR, the toolchain), less what cargo sets for this test's
    // process (build scripts watching CARGO_MANIFEST_DIR would otherwise run again, then again
    // at the next cargo test, and everything above them be rebuilt twice) and less the caller's
    // settings (scripts/test exports DATABASE_URL; a developer may have PMS_CLIENT_ID).
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let set_by_cargo = name == "CARGO"
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "CARGO_RUSTC_CURRENT_DIR",
                "OUT_DIR",
            ]
            .contains(&&*name);
        if set_by_cargo {
            command.env_remove(&*name);
        }
    }
    for name in documented_settings() {
        command.env_remove(name);
    }
    // The cargo running this test builds the binaries too.
    let cargo_dir = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|cargo| cargo.parent().map(Path::to_path_buf));
    let path = std::env::var("PATH").unwrap_or_default();
    let path = match cargo_dir {
        Some(dir) => format!("{}:{path}", dir.display()),
        None => path,
    };
    command
        .env("PATH", path)
        .env("RUN_PROFILE", "debug")
        .env("APP_ENV", "development")
        .env("PORT", free_port().to_string())
        .env("PMS_FAKE_PORT", free_port().to_string())
        .env("DATABASE_URL", &database_url)
        .env("PG_ADMIN_URL", &admin_url)
        .env("REDIS_URL", &redis_url)
        .env("REDIS_QUEUE_PREFIX", &redis_prefix)
        .env("DEV_DIR", folder.join("dev"))
        .env("STORAGE_LOCAL_DIR", folder.join("storage"))
        .env("SHUTDOWN_GRACE_SECS", "2")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("scripts/run starts");
    let (send, lines) = mpsc::channel();
    fn forward(stream: impl Read + Send + 'static, send: mpsc::Sender<String>) {
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
    }
    forward(child.stdout.take().expect("stdout"), send.clone());
    forward(child.stderr.take().expect("stderr"), send);
    ScriptRun {
        child,
        marker: format!("DATABASE_URL={database_url}"),
        admin_url,
        database,
        redis_url,
        redis_prefix,
        folder,
        lines,
        output: Vec::new(),
    }
}

/// `scripts/run` stopped by SIGTERM, as `timeout`, an IDE or a process manager stops it (the
/// signal to the script alone, not to its process group as a terminal's Ctrl-C), stops every
/// process it started (API, workers, scheduler, fake PMS) and exits. Their logs, written to a
/// pipe, carry no colour codes.
#[test]
fn scripts_run_stopped_by_sigterm_leaves_no_process_behind() {
    let mut run = start_scripts_run();
    // The first build of the debug binaries takes minutes on a small machine.
    let banner = run.wait_for_line("Villa platform running", Duration::from_secs(1800));
    assert!(
        banner.is_some(),
        "scripts/run did not start the platform:\n{}",
        run.output_tail()
    );
    let mut expected: BTreeSet<String> = procfile().into_values().collect();
    expected.insert("fake-pms".to_owned());
    let deadline = Instant::now() + Duration::from_secs(60);
    let running = loop {
        let running: BTreeSet<String> = processes_marked(&run.marker).into_values().collect();
        if expected.is_subset(&running) || Instant::now() > deadline {
            break running;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        expected.is_subset(&running),
        "scripts/run runs {running:?}, not every one of {expected:?}:\n{}",
        run.output_tail()
    );
    // The workers' start-up lines, written once they run.
    std::thread::sleep(Duration::from_secs(2));

    signal(run.child.id(), "TERM");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = run.child.try_wait().expect("the script's status") {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.is_some(),
        "scripts/run still runs 30 s after SIGTERM:\n{}",
        run.output_tail()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let left = loop {
        let left = processes_marked(&run.marker);
        if left.is_empty() || Instant::now() > deadline {
            break left;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    run.drain(Duration::from_secs(2));
    assert!(
        left.is_empty(),
        "scripts/run exited on SIGTERM ({status:?}) and left running: {left:?}\n{}",
        run.output_tail()
    );
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(143),
        "scripts/run stopped by SIGTERM exits with 128 + 15"
    );

    // The processes' lines, each prefixed with its name (the rest is the script's and cargo's).
    let names: BTreeSet<String> = procfile()
        .into_keys()
        .chain(["fake-pms".to_owned()])
        .collect();
    let logs: Vec<&String> = run
        .output
        .iter()
        .filter(|line| {
            line.strip_prefix('[')
                .and_then(|rest| rest.split_once("] "))
                .is_some_and(|(name, _)| names.contains(name))
        })
        .collect();
    let logged = |process: &str| {
        logs.iter()
            .any(|line| line.starts_with(&format!("[{process}] ")))
    };
    assert!(
        logged("api") && logged("worker-system") && logged("fake-pms"),
        "no log line of the API, worker-system or the fake PMS:\n{}",
        run.output_tail()
    );
    let coloured: Vec<&&String> = logs
        .iter()
        .filter(|line| line.contains('\u{1b}'))
        .take(5)
        .collect();
    assert!(
        coloured.is_empty(),
        "development logs written to a pipe carry colour codes: {coloured:?}"
    );
}

/// The variables the code reads, from its source: every quoted name of the form
/// `UPPER_CASE` outside test modules in the settings (every file of `domain/src/settings/`, one
/// per concern), the S3 store's AWS options (`domain/src/storage/s3.rs`), the periodic jobs'
/// interval settings (`jobs/src`) and the environment the workers and the scheduler read
/// themselves (`workers/src`).
fn settings_read_by_the_code() -> BTreeSet<String> {
    fn names_in(source: &str, found: &mut BTreeSet<String>) {
        // Test modules come last in each file: nothing they name is a setting.
        let code = source.split("#[cfg(test)]").next().unwrap_or_default();
        for quoted in code.split('"').skip(1).step_by(2) {
            let is_name = quoted.len() > 2
                && quoted.starts_with(|c: char| c.is_ascii_uppercase())
                && quoted
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && (quoted.contains('_') || quoted == "PORT");
            if is_name {
                found.insert(quoted.to_owned());
            }
        }
    }
    let mut found = BTreeSet::new();
    // The log filter, read by tracing-subscriber (`EnvFilter::try_from_default_env`) in
    // `domain::process`, which names it nowhere in quotes.
    if read("domain/src/process.rs").contains("EnvFilter::try_from_default_env") {
        found.insert("RUST_LOG".to_owned());
    }
    for file in rust_files("domain/src/settings") {
        names_in(&std::fs::read_to_string(&file).unwrap(), &mut found);
    }
    names_in(&read("domain/src/storage/s3.rs"), &mut found);
    for file in rust_files("jobs/src")
        .into_iter()
        .chain(rust_files("workers/src"))
    {
        let source = std::fs::read_to_string(&file).unwrap();
        for line in source.lines() {
            // `INTERVAL_SETTING: &'static str = "..."` and `std::env::var("...")`.
            if line.contains("INTERVAL_SETTING") || line.contains("env::var") {
                names_in(line, &mut found);
            }
        }
    }
    found
}

/// Every `.rs` file under the workspace's `folder`, at any depth.
fn rust_files(folder: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut paths = vec![root().join(folder)];
    while let Some(path) = paths.pop() {
        if path.is_dir() {
            paths.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    assert!(!found.is_empty(), "no .rs file under {folder}");
    found
}

/// docs/configuration.md documents exactly the settings the code reads: a setting added to the
/// code without its row, or a row left behind by a setting removed, fails here.
#[test]
fn the_documented_settings_are_the_ones_the_code_reads() {
    // Read by the code but not a setting of the platform: the tests' own Redis. (The container's
    // host name, a worker's name, is no `UPPER_SNAKE` name: the reader passes over it.)
    const NOT_SETTINGS: [&str; 1] = ["TEST_REDIS_URL"];
    let read: BTreeSet<String> = settings_read_by_the_code()
        .into_iter()
        .filter(|name| !NOT_SETTINGS.contains(&name.as_str()))
        .collect();
    let documented = documented_settings();
    let undocumented: Vec<&String> = read.difference(&documented).collect();
    let unread: Vec<&String> = documented.difference(&read).collect();
    assert!(
        undocumented.is_empty() && unread.is_empty(),
        "read by the code, not in docs/configuration.md: {undocumented:?}; \
         in docs/configuration.md, read nowhere: {unread:?}"
    );
}

/// The modules of a crate's source folder (`management::villas` for `management/villas.rs`, the
/// folder's name for its `mod.rs`, `""` for `lib.rs`), each with the modules of the same crate
/// its code names, outside comments and test modules: `crate::a::b`, `super::a`, `self::a`, a
/// folder module's `part::x` naming its own part, and each path of a `use` group
/// (`crate::{a::{self, b}, c as d}`). A name that a folder's `mod.rs` re-exports from one of its
/// parts (`pub use part::Item`, `pub use self::part::*`) is followed to the part that defines it;
/// the re-export itself is not counted as the folder using its part.
fn module_imports(folder: &Path) -> BTreeMap<String, BTreeSet<String>> {
    /// The paths of the use tree at the start of `text` (after `prefix::`), and where it ends.
    fn use_tree(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
        let skip = |i: usize| i + text[i..].len() - text[i..].trim_start().len();
        let name_at = |i: usize| {
            let len = text[i..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(text.len() - i);
            &text[i..i + len]
        };
        let mut i = skip(0);
        if text[i..].starts_with('{') {
            i += 1;
            loop {
                i = skip(i);
                match text[i..].chars().next() {
                    None => return i,
                    Some('}') => return i + 1,
                    Some(',') => i += 1,
                    Some(_) => i += use_tree(&text[i..], prefix, out).max(1),
                }
            }
        }
        let name = name_at(i);
        let mut path = prefix.to_vec();
        if name.is_empty() {
            // `*`, or the end of a path (`f::<T>`).
            out.push(path);
            return i;
        }
        if name != "self" {
            path.push(name.to_owned());
        }
        i += name.len();
        let next = skip(i);
        if text[next..].starts_with("::") {
            return next + 2 + use_tree(&text[next + 2..], &path, out);
        }
        out.push(path);
        // `name as alias`
        if name_at(next) == "as" {
            let alias = skip(next + 2);
            return alias + name_at(alias).len();
        }
        i
    }
    fn idents(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
            match (c.is_ascii_alphanumeric() || c == '_', start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    out.push((s, &text[s..i]));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    // Every module, its code, and whether it is a folder's `mod.rs` (or `lib.rs`).
    let mut files = vec![folder.to_path_buf()];
    let mut modules: BTreeMap<String, (String, bool)> = BTreeMap::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(folder).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let is_folder = matches!(parts.last().map(String::as_str), Some("mod" | "lib"));
            if is_folder {
                parts.pop();
            }
            let source = std::fs::read_to_string(&path).unwrap();
            // Test modules come last in a file; comments name what the code does not use.
            let code: Vec<&str> = source
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect();
            modules.insert(parts.join("::"), (code.join("\n"), is_folder));
        }
    }
    let parent_of = |module: &str| module.rsplit_once("::").map_or("", |(p, _)| p).to_owned();
    let parts_of = |module: &str| -> Vec<String> {
        modules
            .keys()
            .filter(|m| !m.is_empty() && parent_of(m) == module)
            .cloned()
            .collect()
    };
    let last_name = |module: &str| module.rsplit("::").next().unwrap_or_default().to_owned();
    // The items each module defines.
    let defined: BTreeMap<&String, BTreeSet<&str>> = modules
        .iter()
        .map(|(module, (code, _))| {
            let words = idents(code);
            let items = words
                .windows(2)
                .filter(|w| {
                    matches!(
                        w[0].1,
                        "fn" | "struct" | "enum" | "type" | "const" | "static" | "trait" | "union"
                    ) || (w[0].1 == "macro_rules" && code[w[0].0..].starts_with("macro_rules!"))
                })
                .map(|w| w[1].1)
                .collect();
            (module, items)
        })
        .collect();
    // The module a path names: its longest prefix that is a module, followed into the part of a
    // folder that defines the item named next.
    let resolve = |path: &[String]| -> Option<String> {
        let n = (0..=path.len())
            .rev()
            .find(|&n| modules.contains_key(&path[..n].join("::")))?;
        let mut module = path[..n].join("::");
        if let Some(item) = path.get(n) {
            while !defined[&module].contains(item.as_str()) {
                match parts_of(&module)
                    .into_iter()
                    .find(|part| defined[part].contains(item.as_str()))
                {
                    Some(part) => module = part,
                    None => break,
                }
            }
        }
        Some(module)
    };

    let mut imports = BTreeMap::new();
    for (module, (code, is_folder)) in &modules {
        let own: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let parts: BTreeSet<String> = if *is_folder {
            parts_of(module).iter().map(|p| last_name(p)).collect()
        } else {
            BTreeSet::new()
        };
        // A folder's re-exports of its own parts are the folder's face, not its use of them.
        let mut code = code.clone();
        for statement in ["pub use ", "pub(crate) use ", "pub(super) use "] {
            while let Some(at) = code.find(statement).filter(|&at| {
                let rest = &code[at + statement.len()..];
                rest.starts_with("self::")
                    || parts.iter().any(|p| rest.starts_with(&format!("{p}::")))
            }) {
                let end = code[at..].find(';').map_or(code.len(), |e| at + e + 1);
                code.replace_range(at..end, "");
            }
        }
        let words = idents(&code);
        let mut named = BTreeSet::new();
        for &(at, word) in &words {
            let after = &code[at + word.len()..];
            if !after.starts_with("::") || code[..at].ends_with("::") {
                continue;
            }
            let base: Vec<String> = match word {
                "crate" => Vec::new(),
                "self" => own.clone(),
                "super" => own[..own.len().saturating_sub(1)].to_vec(),
                part if parts.contains(part) => own.clone(),
                _ => continue,
            };
            let (base, from) = if word == "crate" || word == "self" || word == "super" {
                // `super::super::x`
                let mut base = base;
                let mut from = at + word.len() + 2;
                while code[from..].starts_with("super::") {
                    base.pop();
                    from += "super::".len();
                }
                (base, from)
            } else {
                (base, at)
            };
            let mut paths = Vec::new();
            use_tree(&code[from..], &base, &mut paths);
            named.extend(paths.iter().filter_map(|p| resolve(p)));
        }
        named.remove(module);
        imports.insert(module.clone(), named);
    }
    imports
}

/// The circles of imports among `imports`' modules (each a strongly connected set of more than
/// one module), found by Tarjan's algorithm.
fn import_circles(imports: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        imports: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        circles: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, module: &'a str) {
            let n = self.index.len();
            self.index.insert(module, (n, n));
            self.stack.push(module);
            for next in &self.imports[module] {
                let next = next.as_str();
                match self.index.get(next).copied() {
                    None => {
                        self.visit(next);
                        let low = self.index[next].1.min(self.index[module].1);
                        self.index.get_mut(module).unwrap().1 = low;
                    }
                    Some((i, _)) if self.stack.contains(&next) => {
                        let low = i.min(self.index[module].1);
                        self.index.get_mut(module).unwrap().1 = low;
                    }
                    Some(_) => {}
                }
            }
            if self.index[module].0 == self.index[module].1 {
                let at = self.stack.iter().rposition(|m| *m == module).unwrap();
                let circle: Vec<String> = self.stack.drain(at..).map(str::to_owned).collect();
                if circle.len() > 1 {
                    self.circles.push(circle);
                }
            }
        }
    }
    let mut walk = Walk {
        imports,
        index: BTreeMap::new(),
        stack: Vec::new(),
        circles: Vec::new(),
    };
    for module in imports.keys() {
        if !walk.index.contains_key(module.as_str()) {
            walk.visit(module);
        }
    }
    walk.circles
}

/// docs/development.md: the domain's files import each other in no circle, so that each can be
/// read knowing only what it names; and its surfaces are the API's (`domain/src/<surface>/` for
/// every `api/src/<surface>/` that has handlers of a surface).
#[test]
fn the_domain_has_no_import_circle_and_a_folder_per_surface() {
    let imports = module_imports(&root().join("domain/src"));
    let names = |module: &str| imports.get(module).cloned().unwrap_or_default();
    // The reader sees the domain's imports in their forms: `use crate::{...}` groups, `super::`,
    // a name re-exported by a folder followed to the part that defines it.
    assert!(
        names("onboarding").contains("record::patch")
            && names("management::villas").contains("batch")
            && names("reporting::sync_runs").contains("pagination"),
        "the import reader missed imports of the domain: {imports:?}"
    );
    let circles = import_circles(&imports);
    assert!(
        circles.is_empty(),
        "files of domain/src import each other in a circle: {circles:?}"
    );
    for surface in [
        "onboarding",
        "management",
        "maintenance",
        "inventory",
        "reporting",
    ] {
        assert!(
            root().join("api/src").join(surface).is_dir()
                && root().join("domain/src").join(surface).is_dir(),
            "api/src/{surface}/ has no domain/src/{surface}/"
        );
    }
}

/// The import reader on a crate written for it: the forms it must see, and the circles it must
/// find (through a folder's re-export, and a folder using its own part).
#[test]
fn the_import_reader_finds_circles_through_groups_and_re_exports() {
    let folder = std::env::temp_dir().join(format!("import-reader-{}", Uuid::new_v4()));
    let write = |file: &str, text: &str| {
        let path = folder.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub use b::Shown;\n",
    );
    write(
        "a/mod.rs",
        "mod part;\npub use part::{Thing, made};\n// c::Other in a comment\npub fn helper() {}\n",
    );
    write(
        "a/part.rs",
        "use super::helper;\npub struct Thing;\npub fn made() {}\n",
    );
    write(
        "b.rs",
        "use crate::{\n    a::{self, Thing as T},\n};\npub struct Shown;\npub fn h() { a::helper(); }\n",
    );
    write(
        "c.rs",
        "pub struct Other;\n#[cfg(test)]\nmod tests { use crate::b::h; }\n",
    );
    let imports = module_imports(&folder);
    let edges = |module: &str| imports[module].iter().cloned().collect::<Vec<_>>();
    assert_eq!(
        edges(""),
        Vec::<String>::new(),
        "a folder's re-exports are not uses"
    );
    assert_eq!(edges("a"), Vec::<String>::new());
    assert_eq!(edges("a::part"), ["a"]);
    assert_eq!(
        edges("b"),
        ["a", "a::part"],
        "a group, self, an alias, a re-export followed"
    );
    assert_eq!(
        edges("c"),
        Vec::<String>::new(),
        "test modules are not read"
    );
    assert!(import_circles(&imports).is_empty());

    // c names b's item through the crate's re-export, and b uses c: a circle.
    write(
        "c.rs",
        "pub struct Other;\nfn g() -> crate::Shown { todo!() }\n",
    );
    write(
        "b.rs",
        "pub struct Shown;\npub fn h() { super::c::Other; }\n",
    );
    let circles = import_circles(&module_imports(&folder));
    assert_eq!(circles.len(), 1, "{circles:?}");
    let mut circle = circles[0].clone();
    circle.sort();
    assert_eq!(circle, ["b", "c"]);

    // A folder using its own part (not re-exporting it), which uses the folder.
    write("a/mod.rs", "mod part;\npub fn helper() { part::made(); }\n");
    let circles = import_circles(&module_imports(&folder));
    assert_eq!(circles.len(), 2, "{circles:?}");
    std::fs::remove_dir_all(&folder).unwrap();
}

/// docs/configuration.md gives every default the code has as the code has it: for each setting
/// in `domain::settings::defaults()` (the development default of a required one) and each
/// periodic job's interval (`jobs::Periodic`), its row's default, the backticked value at the
/// setting's place among the row's names, is the code's. A document writes `$PORT` where a
/// default holds the API's port (`AUTH_JWKS_URL`): it stands for `PORT`'s default.
#[test]
fn the_documented_defaults_are_the_ones_the_code_has() {
    fn interval<J: jobs::Periodic>() -> (String, String) {
        let secs = J::DEFAULT_INTERVAL.as_secs();
        (J::INTERVAL_SETTING.to_owned(), secs.to_string())
    }
    let mut code = domain::settings::defaults();
    code.extend([
        interval::<jobs::maintenance::GeneratePlannedWork>(),
        interval::<jobs::maintenance::GenerateTurnovers>(),
        interval::<jobs::alerts::EvaluateStockAlerts>(),
        interval::<jobs::pms::ScheduleSync>(),
        interval::<jobs::exports::ExpireExports>(),
    ]);
    // One setting of each way a default is found (required, parsed, read apart, outside the
    // settings' reader, a periodic job's), so that an empty list cannot pass.
    for name in [
        "DATABASE_URL",
        "PMS_PAGE_SIZE",
        "GRAPH_BASE_URL",
        "RUST_LOG",
        "PM_GENERATE_INTERVAL_SECS",
    ] {
        assert!(
            code.iter().any(|(found, _)| found == name),
            "no default of {name} in {code:?}"
        );
    }
    let port = code
        .iter()
        .find(|(name, _)| name == "PORT")
        .map(|(_, default)| default.clone())
        .expect("PORT has a default");
    let mut documented = BTreeMap::new();
    for (names, defaults) in documented_rows() {
        for (place, name) in names.into_iter().enumerate() {
            documented.insert(name, defaults.get(place).cloned());
        }
    }
    let disagreements: Vec<String> = code
        .iter()
        .filter_map(|(name, default)| {
            let written = documented
                .get(name)
                .cloned()
                .flatten()
                .map(|written| written.replace("$PORT", &port));
            (written.as_deref() != Some(default.as_str())).then(|| {
                format!("{name}: the code's default is {default:?}, the document's {written:?}")
            })
        })
        .collect();
    assert!(
        disagreements.is_empty(),
        "docs/configuration.md and the code disagree on defaults:\n{}",
        disagreements.join("\n")
    );
}
