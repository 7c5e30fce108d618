use super::Opening;
use crate::vulkan::{default_devices, ordered_adapters, VulkanBackend};
use crate::Engine;
use std::rc::Rc;
use vk_runtime::Instance;

/// A backend on `instance`'s default devices, and an engine on it.
fn engine_on(instance: &Instance) -> (Rc<VulkanBackend>, Engine) {
    let infos = default_devices(&ordered_adapters(instance).unwrap());
    let b = Rc::new(VulkanBackend::on(instance.clone(), infos));
    let e = Engine::with_backend(b.clone());
    (b, e)
}

/// Whether device 0 is opening, is open, and how many devices were opened.
fn state(b: &VulkanBackend) -> (bool, bool, u32) {
    let t = b.table.borrow();
    let s = &t.store;
    (
        matches!(s.opening[0], Some(Opening::Running(_))),
        s.devs[0].is_some(),
        s.opened,
    )
}

fn validated<R>(name: &str, body: impl FnOnce(&Instance) -> R) -> R {
    vk_runtime::testing::with_validation(name, body)
        .unwrap_or_else(|m| panic!("validation messages:\n{}", m.join("\n")))
}

/// Host work (a loop the host JIT compiles), then a construct.
const HOST_FIRST: &str = "
let n = 4096;
let a = zeros(f32, n);
for k in 0..3 {
    for i in 0..n { a[i] = a[i] + (i % 5) as f32; }
}
parallel loop for i in 0..n { a[i] = a[i] * 2.0 + 1.0; }
";

#[test]
fn a_program_with_host_work_first_opens_its_device_once_behind_it() {
    validated("accl open ahead", |instance| {
        let (b, mut e) = engine_on(instance);
        e.start_trace().unwrap();
        let p = e.compile(HOST_FIRST).unwrap();
        // Compiled: opening, or open if the thread was done by the time the
        // kernels came (joined then, without a wait).
        let (opening, open, n) = state(&b);
        assert!(opening != open);
        assert_eq!(n, u32::from(open));
        e.run(&p).unwrap();
        assert_eq!(state(&b), (false, true, 1));
        // The opening thread compiled the kernel for the launch.
        let trace = e.stop_trace().unwrap();
        assert!(trace.contains("on device 0 ahead"), "{trace}");
        assert!(!trace.contains("at launch"), "{trace}");
        let (a, _) = e.get_array::<f32>("a").unwrap();
        // Three times i % 5, doubled, plus one.
        let want: Vec<f32> = (0..4096)
            .map(|i| (3 * (i % 5)) as f32 * 2.0 + 1.0)
            .collect();
        assert_eq!(a, want);
        let mut host = Engine::new();
        host.eval(HOST_FIRST).unwrap();
        assert_eq!(host.get_array::<f32>("a").unwrap().0, want);
        // A second input compiles on the open device: no other open.
        e.eval("parallel loop for i in 0..n { a[i] = a[i] - 1.0; }")
            .unwrap();
        assert_eq!(state(&b), (false, true, 1));
        assert_eq!(e.get_array::<f32>("a").unwrap().0[7], 12.0);
        assert!(e.take_validation_messages().is_empty());
    });
}

#[test]
fn a_program_without_device_code_opens_no_device() {
    validated("accl no device code", |instance| {
        let (b, mut e) = engine_on(instance);
        let v = e
            .eval("let s = 0; for i in 0..10 { s += i; } set device_num(0); s + acc_get_num_devices()")
            .unwrap();
        assert_eq!(v.unwrap().to_string(), format!("{}", 45 + b.infos.len()));
        assert_eq!(state(&b), (false, false, 0));
        assert!(b.table.borrow().store.opening.iter().all(Option::is_none));
    });
}

#[test]
fn a_failed_open_is_reported_as_a_synchronous_open_reports_it() {
    validated("accl failed open", |instance| {
        let messages: Vec<_> = [true, false]
            .into_iter()
            .map(|ahead| {
                let (b, mut e) = engine_on(instance);
                {
                    let mut t = b.table.borrow_mut();
                    // An adapter the instance does not have: opening fails.
                    t.store.adapters[0] = 1000;
                    t.store.open_ahead = ahead;
                }
                let said = |e: crate::engine::Error| {
                    let d = &e.diags[0];
                    // (Spans count from each input's start.)
                    let labels: Vec<String> = d.labels.iter().map(|l| l.1.clone()).collect();
                    (d.code, d.message.clone(), labels, d.help.clone())
                };
                let p = e.compile(HOST_FIRST).unwrap();
                // Started (and maybe failed already) or not.
                assert_eq!(b.table.borrow().store.opening[0].is_some(), ahead);
                let err = said(e.run(&p).unwrap_err());
                assert_eq!(state(&b), (false, false, 0));
                // The next use tries again, and fails the same way.
                assert_eq!(said(e.eval(HOST_FIRST).unwrap_err()), err);
                err
            })
            .collect();
        assert_eq!(messages[0], messages[1]);
        assert_eq!(messages[0].0, "accl::device::data");
        assert!(
            messages[0].1.contains("no Vulkan adapter with index 1000"),
            "{:?}",
            messages[0]
        );
    });
}

#[test]
fn an_engine_dropped_while_its_device_opens_shuts_down_cleanly() {
    validated("accl drop while opening", |instance| {
        let (b, mut e) = engine_on(instance);
        // Device code the run never reaches (and no kernel, whose compile
        // would join a thread that is done).
        e.eval(
            "let n = 5; let a = zeros(f32, 8);
            if n < 0 { data copyin(a) { wait; } }",
        )
        .unwrap();
        assert_eq!(state(&b), (true, false, 0));
        drop(e);
        drop(b);
    });
}
