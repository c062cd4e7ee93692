//! `scripts/setup` (the README's first step) on a simulated fresh machine: a PATH
//! holding only the shell tools the script uses plus stub `cargo`, `id`, `apt-get` and
//! `sudo` written here, and no cmake, C++ compiler or libclang. The stub `apt-get`
//! records its arguments and "installs" by creating the missing tools, so the script's
//! check-install-recheck path runs end to end without touching the real machine.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/setup")
}

fn stub(bin: &Path, name: &str, body: &str) {
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A bare machine: real sh/sed/sort/tr, a stub cargo, and `id -u` answering `uid`.
fn machine(uid: u32) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    let lib = root.path().join("lib");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&lib).unwrap();
    for tool in ["sh", "sed", "sort", "tr", "cat", "chmod"] {
        let real = ["/bin", "/usr/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} not found"));
        std::os::unix::fs::symlink(real, bin.join(tool)).unwrap();
    }
    stub(&bin, "cargo", "exit 0");
    stub(&bin, "id", &format!("echo {uid}"));
    (root, bin, lib)
}

fn run(bin: &Path, lib: &Path, args: &[&str]) -> Output {
    Command::new(bin.join("sh"))
        .arg(script())
        .args(args)
        .env_clear()
        .env("PATH", bin)
        .env("SLEUTH_SETUP_LIB_DIRS", lib)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn root_on_debian_installs_the_three_tools_then_is_a_no_op() {
    let (root, bin, lib) = machine(0);
    let log = root.path().join("apt.log");
    stub(
        &bin,
        "apt-get",
        &format!(
            "echo \"$@\" >> {log}\n\
             case \"$*\" in *install*) for t in cmake c++ clang; do printf '#!/bin/sh\\n' > {bin}/$t; done;\n\
             chmod +x {bin}/cmake {bin}/c++ {bin}/clang; : > {lib}/libclang-14.so.1;; esac",
            log = log.display(),
            bin = bin.display(),
            lib = lib.display()
        ),
    );
    let o = run(&bin, &lib, &["--check"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("needs: cmake c++ clang libclang"),
        "{}",
        text(&o)
    );
    assert!(!log.exists(), "--check installs nothing");

    let o = run(&bin, &lib, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        calls,
        "update -qq\ninstall -y -qq clang cmake g++ libclang-dev\n"
    );
    assert!(text(&o).contains("done"), "{}", text(&o));

    let o = run(&bin, &lib, &[]);
    assert!(o.status.success());
    assert_eq!(text(&o), "", "a machine with the tools hears nothing");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
}

#[test]
fn without_root_or_sudo_it_prints_the_one_command() {
    let (_root, bin, lib) = machine(1000);
    stub(&bin, "cmake", "exit 0");
    stub(&bin, "clang", "exit 0");
    stub(&bin, "apt-get", "echo must not run >&2; exit 9");
    let o = run(&bin, &lib, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o);
    assert!(err.contains("needs: c++ libclang"), "{err}");
    assert!(
        err.contains("sudo sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ libclang-dev'"),
        "{err}"
    );
    assert!(!err.contains("must not run"), "{err}");
}

#[test]
fn dnf_machines_get_their_own_package_names_through_sudo() {
    let (root, bin, lib) = machine(1000);
    let log = root.path().join("sudo.log");
    stub(&bin, "c++", "exit 0");
    stub(&bin, "dnf", "exit 0");
    // printf, not echo: `sudo -n true` would make echo swallow its newline.
    stub(
        &bin,
        "sudo",
        &format!("printf '%s\\n' \"$*\" >> {}", log.display()),
    );
    let o = run(&bin, &lib, &[]);
    // The stub sudo installs nothing, so the recheck reports what is still missing.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls.contains("sh -c dnf install -y clang clang-devel cmake"),
        "{calls}"
    );
    assert!(
        text(&o).contains("still missing after the install: cmake clang libclang"),
        "{}",
        text(&o)
    );
}
