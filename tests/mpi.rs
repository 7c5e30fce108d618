//! MPI: the `mpi_*` builtins as one rank without a launcher (the host
//! backend and the Vulkan device), their diagnostics (insta snapshots of
//! `render_plain` at 80 columns), and, with the `mpi` feature, the built
//! `accl` under `mpirun -np 2` and `-np 4` on loopback: the Jacobi examples
//! print what their single-rank run prints, on both backends, and a rank
//! that fails ends the whole job with its diagnostic.

use crate::common;
use common::{run, same_as_host, Floats};
use insta::assert_snapshot;

/// The builtins as rank 0 of 1: no MPI call is made.
const ONE_RANK: &str = r#"
let r = mpi_rank();
let s = mpi_size();
mpi_barrier();
let x = mpi_allreduce(2.5, "+");
let p = mpi_allreduce(3i64, "*");
let hi = mpi_allreduce(7u8, "max");
let lo = mpi_allreduce(-2.0f32, "min");
let any = mpi_allreduce(true, "max");
let v = mpi_bcast(41 + r, 0);
let a = zeros(i32, 4, 5);
for j in 0..4 {
    for i in 0..5 {
        a[j, i] = j * 10 + i;
    }
}
let b = zeros(i32, 4, 5);
// A self exchange copies the send section into the receive section: a
// column into a column, a row into a row, a block into another box.
mpi_sendrecv(a[:, 1:1], 0, b[:, 4:1], 0);
mpi_sendrecv(a[2:1], 0, b[0:1], 0);
mpi_sendrecv(a[1:2, 0:2], 0, b[2:1, 0:4], 0);
// No partner: nothing moves.
mpi_sendrecv(a, mpi::PROC_NULL, b, -1);
let c = zeros(f64, 2, 3, 4);
let d = zeros(f64, 2, 3, 4);
for k in 0..2 {
    for j in 0..3 {
        for i in 0..4 {
            c[k, j, i] = (k * 100 + j * 10 + i) as f64;
        }
    }
}
mpi_sendrecv(c[:, 1:2, 3:1], -1, d[1:1, :, 0:1], -1);
mpi_sendrecv(c[:, 1:2, 3:1], 0, d[0:1, 0:2, 0:2], 0);
mpi_bcast(c, 0);
mpi_bcast(c[1:1, :, 2:2], 0);
// On one rank an in-place reduction leaves the array as it was.
let m = arange(f64, 6.0);
mpi_allreduce(m, "+");
mpi_allreduce(m[2:3], "max");
let flags = zeros(bool, 3);
flags[1] = true;
mpi_allreduce(flags, "min");
// Non-blocking messages to itself: the elements are copied when the send
// starts and land when the receive is waited for; tags match them.
let src = arange(f64, 6.0);
let dst = zeros(f64, 6);
let s1 = mpi_isend(src[0:3], 0, 5);
let s2 = mpi_isend(src[3:3], 0, 6);
src[0] = 100.0;
let r2 = mpi_irecv(dst[0:3], 0, 6);
let r1 = mpi_irecv(dst[3:3], 0, 5);
let untouched = dst[0];
mpi_wait(r1);
let reqs = zeros(i32, 3);
reqs[0] = r2;
reqs[1] = s1;
reqs[2] = mpi_isend(src, -1);
mpi_waitall(reqs);
mpi_wait(s2);
mpi_wait(mpi_irecv(dst, mpi::PROC_NULL));
"#;

#[test]
fn the_builtins_act_as_one_rank_without_a_launcher() {
    let r = run(ONE_RANK, false);
    r.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    let e = &r.engine;
    assert_eq!(e.get::<i32>("r"), Some(0));
    assert_eq!(e.get::<i32>("s"), Some(1));
    assert_eq!(e.get::<f64>("x"), Some(2.5));
    assert_eq!(e.get::<i64>("p"), Some(3));
    assert_eq!(e.get::<u8>("hi"), Some(7));
    assert_eq!(e.get::<f32>("lo"), Some(-2.0));
    assert_eq!(e.get::<bool>("any"), Some(true));
    assert_eq!(e.get::<i32>("v"), Some(41));
    let (b, shape) = e.get_array::<i32>("b").unwrap();
    assert_eq!(shape, [4, 5]);
    #[rustfmt::skip]
    assert_eq!(b, [
        20, 21, 22, 23, 24,
        0, 0, 0, 0, 11,
        10, 11, 20, 21, 21,
        0, 0, 0, 0, 31,
    ]);
    // c[:, 1:2, 3:1] is (0,1,3) (0,2,3) (1,1,3) (1,2,3), packed in that
    // order into d[0, 0:2, 0:2].
    let (d, _) = e.get_array::<f64>("d").unwrap();
    assert_eq!(&d[..6], [13.0, 23.0, 0.0, 0.0, 113.0, 123.0]);
    assert!(d[6..].iter().all(|&x| x == 0.0));
    assert_eq!(
        e.get_array::<f64>("m").unwrap().0,
        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(
        e.get_array::<bool>("flags").unwrap().0,
        [false, true, false]
    );
    assert_eq!(e.get::<f64>("untouched"), Some(0.0));
    assert_eq!(
        e.get_array::<f64>("dst").unwrap().0,
        [3.0, 4.0, 5.0, 0.0, 1.0, 2.0]
    );
}

#[test]
fn a_halo_exchange_through_update_runs_on_the_device_as_on_the_host() {
    // One rank, exchanging with itself: the boundary rows and columns of a
    // present array travel through update self, mpi_sendrecv and update
    // device, between the sweeps of a kernel.
    let src = r#"
let n = 12;
let a = zeros(f64, n, n);
for i in 0..n {
    a[0, i] = 1.0;
}
let b = clone(a);
let left = mpi_rank() - 1;
data copy(a) create(b) {
    for step in 0..5 {
        parallel loop collapse(2) for j in 1..n - 1 {
            for i in 1..n - 1 {
                b[j, i] = a[j, i] * 0.5 + (a[j - 1, i] + a[j, i - 1]) * 0.25;
            }
        }
        parallel loop collapse(2) for j in 1..n - 1 {
            for i in 1..n - 1 {
                a[j, i] = b[j, i];
            }
        }
        update self(a[1:1]);
        update self(a[:, n - 2:1]);
        mpi_sendrecv(a[1:1], 0, a[n - 1:1], 0);
        mpi_sendrecv(a[:, n - 2:1], 0, a[:, 0:1], 0);
        mpi_sendrecv(a[2:1], left, a[3:1], left);
        update device(a[n - 1:1]);
        update device(a[:, 0:1]);
    }
}
let err = mpi_allreduce(abs(a[n / 2, n / 2] - 0.5), "max");
"#;
    let (host, _) = same_as_host(src, Floats::Exact);
    host.result
        .as_ref()
        .unwrap_or_else(|e| panic!("{}", e.render(100)));
    let (a, _) = host.engine.get_array::<f64>("a").unwrap();
    assert!(a[12 * 11 + 5] != 0.0, "the last row received the first");
}

fn fail(src: &str) -> String {
    common::set_env_once(&[]);
    let mut e = accl::Engine::new();
    e.set_print(|_| {});
    match e.eval_source("test.accl", src) {
        Ok(_) => panic!("expected an error from:\n{src}"),
        Err(err) => lang::diag::render_plain(&err.source, &err.diags, 80),
    }
}

#[test]
fn misuse_is_a_located_diagnostic() {
    assert_snapshot!(
        "unknown_operator",
        fail("let err = 0.5;\nerr = mpi_allreduce(err, \"avg\");")
    );
    assert_snapshot!(
        "bool_sum",
        fail("let done = true;\nlet all = mpi_allreduce(done, \"+\");")
    );
    assert_snapshot!(
        "allreduce_of_an_array_in_a_variable",
        fail("let a = zeros(f64, 4);\nlet s = mpi_allreduce(a, \"+\");")
    );
    assert_snapshot!(
        "never_waited",
        fail(
            "let a = zeros(f64, 4);\nlet r = mpi_irecv(a, -1);\nlet s = mpi_isend(a[1:2], -1, 3);"
        )
    );
    assert_snapshot!(
        "waited_twice",
        fail("let a = zeros(f64, 4);\nlet r = mpi_isend(a, -1);\nmpi_wait(r);\nmpi_wait(r);")
    );
    assert_snapshot!(
        "receive_from_itself_never_sent",
        fail("let a = zeros(f64, 4);\nlet r = mpi_irecv(a, 0, 2);\nlet s = mpi_isend(a, 0, 1);\nmpi_waitall();")
    );
    assert_snapshot!(
        "bad_tag",
        fail("let a = zeros(f64, 4);\nlet r = mpi_isend(a, 0, 10000);")
    );
    assert_snapshot!(
        "allreduce_of_a_section_with_a_number",
        fail("let a = zeros(f64, 4);\nmpi_allreduce(a[0:2], 1);")
    );
    assert_snapshot!(
        "partner_out_of_range",
        fail("let a = zeros(f64, 8, 8);\nlet right = mpi_rank() + 1;\nmpi_sendrecv(a[:, 6:1], right, a[:, 7:1], right);")
    );
    assert_snapshot!("root_out_of_range", fail("let x = mpi_bcast(1.5, 2);"));
    assert_snapshot!(
        "sizes_differ",
        fail("let a = zeros(f64, 8, 8);\nmpi_sendrecv(a[1:1], 0, a[:, 0:1], 0);\nmpi_sendrecv(a[1:1], 0, a[7:1, 0:4], 0);")
    );
    assert_snapshot!(
        "element_types_differ",
        fail("let a = zeros(f64, 8);\nlet b = zeros(f32, 8);\nmpi_sendrecv(a, 0, b, 0);")
    );
    assert_snapshot!(
        "one_way_self_exchange",
        fail("let a = zeros(f64, 8);\nmpi_sendrecv(a[0:1], -1, a[7:1], 0);")
    );
    assert_snapshot!(
        "section_outside_the_array",
        fail("let a = zeros(f64, 8, 8);\nmpi_sendrecv(a[:, 7:2], -1, a[:, 0:2], 0);")
    );
    assert_snapshot!(
        "section_with_an_index",
        fail("let a = zeros(f64, 8, 8);\nmpi_sendrecv(a[0:1, 3], 0, a[1:1, 3:1], 0);")
    );
    assert_snapshot!(
        "section_of_a_scalar",
        fail("let x = 1.0;\nmpi_bcast(x[0:1], 0);")
    );
}

/// The single-rank behaviour costs no MPI: without a launcher nothing
/// initialises it (a finalise is then a no-op).
#[test]
fn no_launcher_no_mpi() {
    assert!(!accl::mpi::launched());
    assert_eq!(accl::mpi::world(), Ok((0, 1)));
    assert_eq!(accl::mpi::default_device(4), 0);
    accl::mpi::finalize();
}

#[cfg(feature = "mpi")]
mod launched {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    fn root() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// How every test starts `mpirun`: as root (containers), oversubscribed
    /// (CI has two cores), over loopback TCP only.
    const MPIRUN_FLAGS: [&str; 11] = [
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,tcp",
        "--mca",
        "btl_tcp_if_include",
        "lo",
        "--mca",
        "oob_tcp_if_include",
        "lo",
    ];

    /// Exit status, stdout and stderr of `accl run ARGS`, under `mpirun -np
    /// np` when `np` is given: as root (containers), oversubscribed (CI has
    /// two cores), over loopback TCP only, ended after two minutes (a hang
    /// is a failure, not a stuck CI).
    fn accl(np: Option<usize>, args: &[&str]) -> (i32, String, String) {
        accl_env(np, args, &[])
    }

    /// [`accl`] with more environment variables for the ranks.
    fn accl_env(np: Option<usize>, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
        super::common::set_env_once(&[]);
        let bin = env!("CARGO_BIN_EXE_accl");
        let mut cmd = Command::new("timeout");
        cmd.args(["--kill-after=10", "120"]);
        if let Some(np) = np {
            let mpirun = which("mpirun").unwrap_or_else(|| {
                panic!("mpirun is missing: scripts/setup.sh installs Open MPI (openmpi-bin)")
            });
            cmd.arg(mpirun)
                .args(MPIRUN_FLAGS)
                .args(["-np", &np.to_string()]);
        }
        cmd.arg(bin).arg("run").args(args).current_dir(root());
        cmd.envs(env.iter().copied());
        let out = cmd.output().expect("run timeout/mpirun");
        let code = out.status.code().unwrap_or(-1);
        assert_ne!(code, 124, "timed out: {args:?} on {np:?} ranks");
        (
            code,
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn which(name: &str) -> Option<PathBuf> {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| Path::new(f).is_file())
        })
    }

    /// The example on one rank (no launcher), then on 2 and 4 ranks: the
    /// same printed line, on the host backend and the device.
    fn same_on_every_rank_count(example: &str, grid: &[&str], expect: &str) {
        for backend in [Some("--host"), None] {
            let mut args: Vec<&str> = backend.into_iter().collect();
            args.push(example);
            args.extend(grid);
            let (code, one, err) = accl(None, &args);
            assert_eq!(code, 0, "{args:?} on one rank failed:\n{err}");
            assert!(one.starts_with(expect), "{args:?}: {one}");
            for np in [2, 4] {
                let (code, out, err) = accl(Some(np), &args);
                assert_eq!(code, 0, "{args:?} on {np} ranks failed:\n{out}\n{err}");
                assert_eq!(out, one, "{args:?} on {np} ranks:\n{err}");
            }
        }
    }

    // 46 interior rows and 38 columns: blocks of unequal sizes on 4 ranks.
    const GRID: [&str; 3] = ["48", "40", "120"];
    const LINE: &str = "jacobi 48x40: 120 iterations";

    #[test]
    fn jacobi_by_rows_prints_the_single_rank_result() {
        same_on_every_rank_count("examples/jacobi_mpi.accl", &GRID, LINE);
    }

    #[test]
    fn jacobi_by_rows_and_columns_prints_the_single_rank_result() {
        same_on_every_rank_count("examples/jacobi_mpi_2d.accl", &GRID, LINE);
    }

    #[test]
    fn rank_r_starts_on_device_r_mod_devices_unless_one_is_chosen() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("device.accl");
        std::fs::write(
            &script,
            "let d = mpi_allreduce(acc_get_device_num() * (1 << (8 * mpi_rank())), \"+\");\nif mpi_rank() == 0 {\n    println(acc_get_num_devices(), \" devices: \", d);\n}\n",
        )
        .unwrap();
        let s = script.to_str().unwrap();
        // Two logical devices on lavapipe: ranks 0, 1, 2 on devices 0, 1, 0.
        let two = [("ACCL_DEVICES", "0,0")];
        let (code, out, err) = accl_env(Some(3), &[s], &two);
        assert_eq!((code, out.as_str()), (0, "2 devices: 256\n"), "{err}");
        let (code, out, err) = accl_env(Some(3), &["--device", "1", s], &two);
        assert_eq!((code, out.as_str()), (0, "2 devices: 65793\n"), "{err}");
    }

    #[test]
    fn allreduce_combines_arrays_and_sections_in_place_on_every_rank() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("allreduce.accl");
        // Rank r holds r + 1 + i in a[i]; the sum over 3 ranks is 6 + 3i.
        // The section a[1:2, ..] of a 2-D array takes the max: rank 2's.
        std::fs::write(
            &script,
            "let r = mpi_rank();
let a = zeros(f64, 5);
for i in 0..5 { a[i] = (r + 1 + i) as f64; }
mpi_allreduce(a, \"+\");
let b = zeros(i32, 3, 2);
for j in 0..3 { for i in 0..2 { b[j, i] = r * 10 + j; } }
mpi_allreduce(b[1:2, :], \"max\");
let on = zeros(bool, 2);
on[0] = r == 1;
on[1] = true;
mpi_allreduce(on, \"max\");
let all = zeros(bool, 1);
all[0] = r != 1;
mpi_allreduce(all, \"min\");
println(r, \": \", a, \" \", b[0, 1], \" \", b[1, 0], \" \", b[2, 1], \" \", on, \" \", all);
",
        )
        .unwrap();
        let s = script.to_str().unwrap();
        for backend in [&["--host"][..], &[][..]] {
            let mut args = backend.to_vec();
            args.push(s);
            let (code, out, err) = accl(Some(3), &args);
            assert_eq!(code, 0, "{out}\n{err}");
            let mut lines: Vec<&str> = out.lines().collect();
            lines.sort();
            for (r, line) in lines.iter().enumerate() {
                assert_eq!(
                    *line,
                    format!("{r}: [6 9 12 15 18] {} 21 22 [true true] [false]", r * 10),
                    "{backend:?}\n{err}"
                );
            }
        }
        // Sections of different sizes: a diagnostic on the ranks, not a
        // reduction of unrelated bytes.
        std::fs::write(
            &script,
            "let r = mpi_rank();\nlet a = zeros(f64, 2 + r);\nmpi_allreduce(a, \"+\");\n",
        )
        .unwrap();
        let (code, _, err) = accl(Some(2), &["--host", s]);
        assert_ne!(code, 0);
        assert!(err.contains("accl::run::mpi_mismatch"), "{err}");
    }

    #[test]
    fn a_failing_rank_ends_the_job_with_its_diagnostic() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fail.accl");
        std::fs::write(
            &script,
            "let r = mpi_rank();\nif r == 1 {\n    assert(false, \"rank 1 fails on purpose\");\n}\nmpi_barrier();\nprintln(\"passed\");\n",
        )
        .unwrap();
        let (code, out, err) = accl(Some(2), &["--host", script.to_str().unwrap()]);
        assert_ne!(code, 0, "the job must fail:\n{out}\n{err}");
        assert!(!out.contains("passed"), "rank 0 must not pass the barrier");
        assert!(
            err.contains("rank 1: accl::run::assert_failed")
                && err.contains("rank 1:   × assertion failed: rank 1 fails on purpose"),
            "rank 1's diagnostic, prefixed:\n{err}"
        );
        // A receive section that does not match what its source sends.
        std::fs::write(
            &script,
            "let r = mpi_rank();\nlet a = zeros(f64, 2 + r);\nlet b = zeros(f64, 2 + r);\nmpi_sendrecv(a, 1 - r, b, 1 - r);\n",
        )
        .unwrap();
        let (code, _, err) = accl(Some(2), &["--host", script.to_str().unwrap()]);
        assert_ne!(code, 0);
        // Both ranks see the mismatch; the first to abort may cut the other short.
        assert!(
            err.contains("accl::run::mpi_mismatch")
                && (err.contains("rank 1 sends 3 `f64` elements, but `b` receives 2")
                    || err.contains("rank 0 sends 2 `f64` elements, but `b` receives 3")),
            "{err}"
        );
    }

    /// `mpirun -np np PROGRAM..` (the settings of [`accl_env`]), ended after
    /// two minutes: exit status, stderr and how long it took.
    fn mpirun(np: usize, program: &[&str]) -> (i32, String, std::time::Duration) {
        super::common::set_env_once(&[]);
        let mpirun = which("mpirun").expect("mpirun is missing");
        let t = std::time::Instant::now();
        let out = Command::new("timeout")
            .args(["--kill-after=10", "120"])
            .arg(mpirun)
            .args(MPIRUN_FLAGS)
            .args(["-np", &np.to_string()])
            .args(program)
            .current_dir(root())
            .output()
            .expect("run timeout/mpirun");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            t.elapsed(),
        )
    }

    /// Ranks that wait for each other forever in `mpi_allreduce`.
    const FOREVER: &str = "let n = 0;\nwhile true {\n    n = mpi_allreduce(1, \"+\");\n}\n";

    /// Generous: a job that is not ended hangs until the two-minute timeout.
    const NO_HANG: std::time::Duration = std::time::Duration::from_secs(10);

    #[test]
    fn a_rank_killed_mid_run_ends_the_job_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("forever.accl");
        std::fs::write(&script, FOREVER).unwrap();
        let bin = env!("CARGO_BIN_EXE_accl");
        for backend in ["--host", "--device=0"] {
            // Rank 1 is killed (SIGKILL) a second after it starts: `exec`
            // keeps the shell's pid for accl. The time of the kill goes to
            // a file.
            let killed = dir.path().join(format!("killed{}", backend.len()));
            let sh = format!(
                "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 1; touch {}; kill -9 $$) & fi; exec {bin} run {backend} {}",
                killed.display(),
                script.display()
            );
            let (code, err, _) = mpirun(3, &["sh", "-c", &sh]);
            let after_kill = std::fs::metadata(&killed)
                .and_then(|m| m.modified())
                .map(|t| t.elapsed().unwrap_or_default())
                .unwrap_or_else(|e| panic!("rank 1 was not killed ({e}):\n{err}"));
            assert_ne!(code, 124, "the job hung: {err}");
            assert_ne!(code, 0, "{err}");
            assert!(
                after_kill < NO_HANG,
                "{backend}: the job ended {after_kill:?} after the kill:\n{err}"
            );
            assert!(
                err.contains("rank 1") && (err.contains("signal 9") || err.contains("Killed")),
                "{backend}: the message names the rank and the signal:\n{err}"
            );
        }
    }

    #[test]
    fn a_rank_that_fails_while_the_others_wait_in_allreduce_ends_the_job() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("fail_in_allreduce.accl");
        std::fs::write(
            &script,
            "let x = mpi_allreduce(1, \"+\");\nif mpi_rank() == 2 {\n    let a = zeros(f32, 4);\n    let i = 7;\n    a[i] = 1.0;\n}\nlet y = mpi_allreduce(x, \"+\");\nprintln(\"passed \", y);\n",
        )
        .unwrap();
        let bin = env!("CARGO_BIN_EXE_accl");
        let s = script.to_str().unwrap();
        for backend in [&["--host"][..], &[][..]] {
            let mut program = vec![bin, "run"];
            program.extend(backend);
            program.push(s);
            let (code, err, took) = mpirun(3, &program);
            assert_ne!(code, 124, "the job hung: {err}");
            assert_ne!(code, 0, "{err}");
            assert!(took < NO_HANG, "{backend:?}: the job took {took:?}:\n{err}");
            assert!(
                err.contains("rank 2: accl::run::index_out_of_bounds"),
                "{backend:?}: rank 2's diagnostic, prefixed:\n{err}"
            );
        }
    }
}
