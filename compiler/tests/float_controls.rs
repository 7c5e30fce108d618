//! Float controls: the execution modes a kernel asks for where the device
//! offers them, so that its floats behave as the host's.

mod common;

use common::*;
use compiler::Spec;

#[test]
fn kernels_ask_to_keep_signed_zeros_infinities_and_nans_where_the_device_allows() {
    let src = Source::new(
        "let a = zeros(f32, 8); let b = zeros(f64, 8);
         parallel loop for i in 0..8 { a[i] = 1.0f32 / (a[i] - a[i]); b[i] = 0.0 - b[i]; }",
    );
    let k = src.kernel(0);
    let text = |preserve_float, spirv_version| {
        let spec = Spec {
            preserve_float,
            spirv_version,
            ..Spec::default()
        };
        compiler::disassemble(&compiler::compile(&k, &spec).unwrap())
    };
    let both = text([true, true], (1, 5));
    assert!(
        both.contains("OpCapability SignedZeroInfNanPreserve"),
        "{both}"
    );
    assert!(both.contains("SignedZeroInfNanPreserve 32"), "{both}");
    assert!(both.contains("SignedZeroInfNanPreserve 64"), "{both}");
    let f32_only = text([true, false], (1, 5));
    assert!(
        f32_only.contains("SignedZeroInfNanPreserve 32"),
        "{f32_only}"
    );
    assert!(
        !f32_only.contains("SignedZeroInfNanPreserve 64"),
        "{f32_only}"
    );
    // Not a device that does not offer it, nor SPIR-V before 1.4 (where
    // the mode needs an extension).
    assert!(!text([false, false], (1, 5)).contains("SignedZeroInfNanPreserve"));
    assert!(!text([true, true], (1, 3)).contains("SignedZeroInfNanPreserve"));
}

#[test]
fn kernels_ask_to_keep_subnormals_where_the_device_allows() {
    let src = Source::new(
        "let a = zeros(f32, 8); let b = zeros(f64, 8);
         parallel loop for i in 0..8 { a[i] = a[i] * 1.0e-30f32; b[i] = b[i] / 3.0; }",
    );
    let k = src.kernel(0);
    let words = |preserve_denorms, spirv_version| {
        let spec = Spec {
            preserve_denorms,
            spirv_version,
            ..Spec::default()
        };
        compiler::compile(&k, &spec).unwrap()
    };
    let both = words([true, true], (1, 5));
    spirv_val(&both);
    let both = compiler::disassemble(&both);
    assert!(both.contains("OpCapability DenormPreserve"), "{both}");
    assert!(both.contains("DenormPreserve 32"), "{both}");
    assert!(both.contains("DenormPreserve 64"), "{both}");
    let f32_only = compiler::disassemble(&words([true, false], (1, 5)));
    assert!(f32_only.contains("DenormPreserve 32"), "{f32_only}");
    assert!(!f32_only.contains("DenormPreserve 64"), "{f32_only}");
    // Not a device that does not offer it, nor SPIR-V before 1.4 (where
    // the mode needs an extension).
    assert!(!compiler::disassemble(&words([false, false], (1, 5))).contains("DenormPreserve"));
    assert!(!compiler::disassemble(&words([true, true], (1, 3))).contains("DenormPreserve"));
}
