//! The processes an operator starts are the ones the workspace builds (ARCHITECTURE.md,
//! "Processes"): every `Procfile` process is a `docker-compose.yml` service running the same
//! binary, and every service running the platform's image is a Procfile process (the rest of
//! compose is infrastructure: Postgres, Redis); every Procfile command names a binary of the
//! workspace; every queue family has its `worker-<family>` process; and the Dockerfile copies
//! the binaries without naming them. Plain tests: no database, no Redis.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    process::Command,
};

use serde_json::Value;

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
    let mut bins = BTreeSet::new();
    for package in metadata["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().expect("targets") {
            let is_bin = target["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k.as_str() == Some("bin")));
            if is_bin && let Some(name) = target["name"].as_str() {
                bins.insert(name.to_owned());
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
/// `command:` written as a flow list (`["worker-system"]`), a block list or a plain string.
/// What it does not follow fails the test naming the line, rather than passing by misreading.
fn compose_services(text: &str) -> BTreeMap<String, Service> {
    let mut services: BTreeMap<String, Service> = BTreeMap::new();
    let mut in_services = false;
    let mut service_indent = None;
    let mut key_indent = None;
    let mut current: Option<String> = None;
    // After `command:` with nothing on its line: the list follows on the next lines.
    let mut command_list = false;
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
        if indent != key_indent {
            // Inside one of the service's keys (environment, depends_on, healthcheck, ...).
            continue;
        }
        let (key, value) = content
            .split_once(':')
            .unwrap_or_else(|| unreadable(number, "`<key>: <value>`", content));
        let value = value.trim();
        match unquote(key) {
            "build" => service.builds = true,
            "image" => service.image = Some(unquote(value).to_owned()),
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
    depends_on:
      api: { condition: service_healthy }
  worker-y:
    image: 'villa-platform'
    command: worker-y --verbose
  shell:
    image: "busybox#1"
volumes:
  data:
"#;
    let services = compose_services(text);
    let names: Vec<&str> = services.keys().map(String::as_str).collect();
    assert_eq!(names, ["api", "postgres", "shell", "worker-x", "worker-y"]);
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
