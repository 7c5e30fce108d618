//! The Khronos validation layer turned on twice, the way a Vulkan developer
//! does: `VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation` in the shell and
//! `ACCL_VALIDATION=1` for accl. The two must compose: a correct script runs
//! and succeeds with no message, on the device and on the host.

use std::process::Command;

const SCRIPT: &str = "let a = arange(f32, 64);
parallel loop for i in 0..64 { a[i] = a[i] * 2.0; }
println(sum(a));
";

#[test]
fn validation_from_the_loader_and_from_accl_compose() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("v.accl");
    std::fs::write(&f, SCRIPT).unwrap();
    for layers in ["VK_LAYER_KHRONOS_validation", ""] {
        for backend in [&[][..], &["--host"][..]] {
            let out = Command::new(env!("CARGO_BIN_EXE_accl"))
                .arg("run")
                .args(backend)
                .arg(&f)
                .env("ACCL_VALIDATION", "1")
                .env("ACCL_CACHE_DIR", "off")
                .env("VK_INSTANCE_LAYERS", layers)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "VK_INSTANCE_LAYERS={layers} {backend:?}: exit {:?}\n{err}",
                out.status.code()
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout), "4032\n");
        }
    }
}
