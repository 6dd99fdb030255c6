//! A local server's members: `command`, `cwd`, `env`, `inherit_env`, `entrypoint_digests`
//! (docs/design.md §3, "Local (stdio) upstreams"). Every problem is recorded, at its member.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use server_identity::{EntrypointDigests, FileDigest};

use crate::binding::{LocalServer, ServerSketch};
use crate::error::CatalogError;
use crate::location::{child, element};
use crate::members::Problems;
use crate::schema::NETWORK_ONLY_MEMBERS;
use crate::small::{SmallObject, SmallValue};

/// Whether `member` is present and not `null` (`null` is the same as absent).
pub(crate) fn is_present(object: &SmallObject<'_>, member: &str) -> bool {
    !matches!(object.get(member), None | Some(SmallValue::Null))
}

/// Reads a `server` object that has a `command`; `path_var` is the gateway's `PATH`, on which
/// a bare `command[0]` is looked up. When a problem was recorded: what a collision report
/// says of it.
pub(crate) fn read_local(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    display_name: Option<&str>,
    path_var: Option<&OsStr>,
) -> Result<LocalServer, ServerSketch> {
    let errors_before = problems.errors.len();
    for member in NETWORK_ONLY_MEMBERS {
        if is_present(server, member) {
            let at = problems.at(child(pointer, member));
            problems.push(CatalogError::NotForLocalServer { at, member });
        }
    }
    let command = read_command(problems, server, pointer);
    let cwd = read_cwd(problems, server, pointer);
    let program = command.as_ref().and_then(|command| {
        resolve_command_program(
            problems,
            command.first()?,
            &child(pointer, "command"),
            path_var,
        )
    });
    let env = read_env(problems, server, pointer);
    let inherit_env = read_inherit_env(problems, server, pointer, env.as_ref());
    let digests = cwd
        .as_deref()
        .and_then(|cwd| read_digests(problems, server, pointer, cwd));
    if let (Some(program), Some(digests)) = (&program, &digests) {
        if !digests.contains(program) {
            let at = problems.at(child(pointer, "entrypoint_digests"));
            problems.push(CatalogError::ProgramNotDigested {
                at,
                program: program.clone(),
                listed: digests.iter().map(|(path, _)| path.to_owned()).collect(),
            });
        }
    }

    let valid = problems.errors.len() == errors_before;
    match (command, program, cwd, env, inherit_env, digests) {
        (
            Some(command),
            Some(program),
            Some(cwd),
            Some(env),
            Some(inherit_env),
            Some(entrypoint_digests),
        ) if valid => Ok(LocalServer {
            display_name: display_name.map(str::to_owned),
            command,
            program,
            cwd,
            env,
            inherit_env,
            entrypoint_digests,
        }),
        // Written only for a server that is not valid (a valid one is described from its
        // values, `ServerSketch::of_binding`).
        (command, program, _, _, _, digests) => Err(ServerSketch::local(
            command.as_deref(),
            program.as_deref(),
            digests.as_ref(),
        )),
    }
}

/// A string no process argument, path or variable can carry a NUL in.
fn process_text<'v>(
    problems: &mut Problems<'_>,
    value: &'v SmallValue<'_>,
    pointer: String,
    expected: &'static str,
) -> Option<&'v str> {
    match value {
        SmallValue::String(text) if text.contains('\0') => {
            let at = problems.at(pointer);
            problems.push(CatalogError::NulCharacter { at });
            None
        }
        SmallValue::String(text) => Some(text),
        other => {
            problems.wrong_type(pointer, expected, other);
            None
        }
    }
}

/// `command`: a non-empty array of strings, `command[0]` non-empty.
fn read_command(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
) -> Option<Vec<String>> {
    let command_pointer = child(pointer, "command");
    let elements = match server.get("command") {
        Some(SmallValue::Array(elements)) => elements,
        Some(other) => {
            problems.wrong_type(
                command_pointer,
                "an array of strings (program, arguments)",
                other,
            );
            return None;
        }
        None => return None,
    };
    if elements.is_empty() {
        let at = problems.at(command_pointer);
        problems.push(CatalogError::EmptyValue {
            at,
            member: "command",
            hint: "give the program and its arguments, e.g. [\"/usr/bin/node\", \"dist/index.js\"]",
        });
        return None;
    }
    let mut argv = Vec::with_capacity(elements.len());
    for (index, value) in elements.iter().enumerate() {
        let text = process_text(
            problems,
            value,
            element(&command_pointer, index),
            "a string",
        )?;
        argv.push(text.to_owned());
    }
    if argv.first().is_some_and(String::is_empty) {
        let at = problems.at(element(&command_pointer, 0));
        problems.push(CatalogError::EmptyValue {
            at,
            member: "command[0]",
            hint: "give the program: an absolute path, or a name to look up on the gateway's PATH",
        });
        return None;
    }
    Some(argv)
}

/// `cwd`: required, an absolute path.
fn read_cwd(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
) -> Option<PathBuf> {
    let cwd_pointer = child(pointer, "cwd");
    let Some(value) = server.get("cwd").filter(|value| !value.is_null()) else {
        let at = problems.at(cwd_pointer);
        problems.push(CatalogError::MissingMember {
            at,
            member: "cwd",
            hint: "give the absolute directory the server runs in, e.g. \"/opt/mcp/everything\"",
        });
        return None;
    };
    let text = process_text(
        problems,
        value,
        cwd_pointer.clone(),
        "a string (an absolute path)",
    )?;
    let path = PathBuf::from(text);
    if !path.is_absolute() {
        let at = problems.at(cwd_pointer);
        problems.push(CatalogError::RelativePath {
            at,
            path: text.to_owned(),
            hint: "write the directory the server runs in as an absolute path (a relative one \
                   would depend on where the gateway was started)",
        });
        return None;
    }
    Some(path)
}

/// Why `command[0]` does not resolve to a program ([`resolve_program`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgramResolution {
    /// A relative path with a `/`: it would depend on where the gateway was started.
    RelativePath,
    /// A bare name found in none of the absolute `PATH` directories (listed, in order).
    NotFound {
        /// The directories searched.
        searched: Vec<PathBuf>,
    },
}

/// `command[0]` as a catalog resolves it: an absolute path as it is; a bare name looked up on
/// the absolute directories of `path_var` (a relative `PATH` entry would depend on where the
/// gateway was started), the first executable regular file winning; a relative path with a
/// `/` is refused. `toolgate identity --command` resolves with this too, so what it prints to
/// pin is what the catalog will find.
///
/// # Errors
///
/// [`ProgramResolution`].
pub fn resolve_program(
    program: &str,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, ProgramResolution> {
    let path = Path::new(program);
    if path.is_absolute() {
        return Ok(path.to_owned());
    }
    if program.contains('/') {
        return Err(ProgramResolution::RelativePath);
    }
    let searched: Vec<PathBuf> = path_var
        .map(|path_var| {
            std::env::split_paths(path_var)
                .filter(|directory| directory.is_absolute())
                .collect()
        })
        .unwrap_or_default();
    searched
        .iter()
        .map(|directory| directory.join(program))
        .find(|candidate| is_executable_file(candidate))
        .ok_or(ProgramResolution::NotFound { searched })
}

/// [`resolve_program`], its refusal recorded at `command[0]`.
fn resolve_command_program(
    problems: &mut Problems<'_>,
    program: &str,
    command_pointer: &str,
    path_var: Option<&OsStr>,
) -> Option<PathBuf> {
    let program_pointer = element(command_pointer, 0);
    match resolve_program(program, path_var) {
        Ok(found) => Some(found),
        Err(ProgramResolution::RelativePath) => {
            let at = problems.at(program_pointer);
            problems.push(CatalogError::RelativePath {
                at,
                path: program.to_owned(),
                hint: "write the program as an absolute path, or as a bare name to look up on \
                       the gateway's PATH",
            });
            None
        }
        Err(ProgramResolution::NotFound { searched }) => {
            let at = problems.at(program_pointer);
            problems.push(CatalogError::ProgramNotFound {
                at,
                program: program.to_owned(),
                searched,
            });
            None
        }
    }
}

/// A regular file (after symlinks) that someone may execute.
fn is_executable_file(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// An environment variable name: non-empty, without `=` or NUL.
fn check_variable_name(problems: &mut Problems<'_>, name: &str, pointer: String) -> bool {
    let valid = !name.is_empty() && !name.contains(['=', '\0']);
    if !valid {
        let at = problems.at(pointer);
        problems.push(CatalogError::BadVariableName {
            at,
            name: name.to_owned(),
        });
    }
    valid
}

/// `env`: optional, an object of string values.
fn read_env(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
) -> Option<BTreeMap<String, String>> {
    let env_pointer = child(pointer, "env");
    let members = match server.get("env") {
        None | Some(SmallValue::Null) => return Some(BTreeMap::new()),
        Some(SmallValue::Object(members)) => members,
        Some(other) => {
            problems.wrong_type(env_pointer, "an object of string values", other);
            return None;
        }
    };
    let mut env = BTreeMap::new();
    let mut valid = true;
    // In name order, whatever order the map keeps: the problems are reported in this order.
    for (name, value) in members.in_name_order() {
        let member_pointer = child(&env_pointer, name);
        valid &= check_variable_name(problems, name, member_pointer.clone());
        match process_text(problems, value, member_pointer, "a string") {
            Some(text) => {
                env.insert(name.to_owned(), text.to_owned());
            }
            None => valid = false,
        }
    }
    valid.then_some(env)
}

/// `inherit_env`: optional, an array of variable names, each once and none also in `env`.
fn read_inherit_env(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    env: Option<&BTreeMap<String, String>>,
) -> Option<Vec<String>> {
    let inherit_pointer = child(pointer, "inherit_env");
    let elements =
        problems.optional_array(server, pointer, "inherit_env", "an array of variable names")?;
    let mut names: Vec<String> = Vec::with_capacity(elements.len());
    let mut valid = true;
    for (index, value) in elements.iter().enumerate() {
        let element_pointer = element(&inherit_pointer, index);
        let Some(name) = process_text(problems, value, element_pointer.clone(), "a string") else {
            valid = false;
            continue;
        };
        if !check_variable_name(problems, name, element_pointer.clone()) {
            valid = false;
            continue;
        }
        if let Some(first) = names.iter().position(|known| known == name) {
            let at = problems.at(element_pointer);
            problems.push(CatalogError::DuplicateVariable {
                at,
                name: name.to_owned(),
                first: element(&inherit_pointer, first),
            });
            valid = false;
            continue;
        }
        if env.is_some_and(|env| env.contains_key(name)) {
            let at = problems.at(element_pointer);
            problems.push(CatalogError::VariableSetAndInherited {
                at,
                name: name.to_owned(),
            });
            valid = false;
            continue;
        }
        names.push(name.to_owned());
    }
    valid.then_some(names)
}

/// `entrypoint_digests`: required, a non-empty object of path → `sha256:<hex>`; relative
/// paths are resolved against `cwd`.
fn read_digests(
    problems: &mut Problems<'_>,
    server: &SmallObject<'_>,
    pointer: &str,
    cwd: &Path,
) -> Option<EntrypointDigests> {
    let digests_pointer = child(pointer, "entrypoint_digests");
    let members = match server.get("entrypoint_digests") {
        Some(SmallValue::Object(members)) => members,
        None | Some(SmallValue::Null) => {
            let at = problems.at(digests_pointer);
            problems.push(CatalogError::MissingMember {
                at,
                member: "entrypoint_digests",
                hint: "list the files the server is started from, each with its digest, e.g. \
                       {\"/usr/bin/node\": \"sha256:...\"}: they are a local server's identity \
                       anchor",
            });
            return None;
        }
        Some(other) => {
            problems.wrong_type(digests_pointer, "an object of path: \"sha256:...\"", other);
            return None;
        }
    };
    if members.is_empty() {
        let at = problems.at(digests_pointer);
        problems.push(CatalogError::EmptyValue {
            at,
            member: "entrypoint_digests",
            hint: "list at least the program command[0] resolves to, with its digest: the \
                   digests are a local server's identity anchor",
        });
        return None;
    }
    let mut digests = EntrypointDigests::new();
    let mut valid = true;
    // In name order, whatever order the map keeps: which of two spellings of one file is the
    // duplicate, and the order of the problems, must not depend on serde_json's features.
    for (path_text, value) in members.in_name_order() {
        let member_pointer = child(&digests_pointer, path_text);
        if path_text.is_empty() || path_text.contains('\0') {
            let at = problems.at(member_pointer);
            problems.push(CatalogError::RelativePath {
                at,
                path: path_text.to_owned(),
                hint: "name a file: an absolute path, or a path relative to cwd",
            });
            valid = false;
            continue;
        }
        let Some(text) = process_text(problems, value, member_pointer.clone(), "a string") else {
            valid = false;
            continue;
        };
        let digest = match text.parse::<FileDigest>() {
            Ok(digest) => digest,
            Err(source) => {
                let at = problems.at(member_pointer);
                problems.push(CatalogError::BadEntrypointDigest { at, source });
                valid = false;
                continue;
            }
        };
        if let Err(source) = digests.insert(cwd.join(path_text), digest) {
            let at = problems.at(member_pointer);
            problems.push(CatalogError::Entrypoint { at, source });
            valid = false;
        }
    }
    valid.then_some(digests)
}
