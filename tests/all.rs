//! Most of the integration tests, as modules of one test binary: one
//! compile and one link instead of one per file. A test file that must have
//! a process of its own (it sets the environment for every engine it opens,
//! or measures the process's memory) is a `[[test]]` of its own in
//! Cargo.toml instead.

#[path = "common/mod.rs"]
mod common;

#[path = "acc_routines.rs"]
mod acc_routines;
#[path = "array_literals.rs"]
mod array_literals;
#[path = "array_reductions.rs"]
mod array_reductions;
#[path = "async_reductions.rs"]
mod async_reductions;
#[path = "atomic_openacc.rs"]
mod atomic_openacc;
#[path = "auto_mapping.rs"]
mod auto_mapping;
#[path = "bench_apps.rs"]
mod bench_apps;
#[path = "check_diagnostics.rs"]
mod check_diagnostics;
#[path = "clause_order.rs"]
mod clause_order;
#[path = "cross_device.rs"]
mod cross_device;
#[path = "data_modifiers.rs"]
mod data_modifiers;
#[path = "data_rebind.rs"]
mod data_rebind;
#[path = "declare_data.rs"]
mod declare_data;
#[path = "default_attributes.rs"]
mod default_attributes;
#[path = "device_async.rs"]
mod device_async;
#[path = "device_atomic_forms.rs"]
mod device_atomic_forms;
#[path = "device_constructs.rs"]
mod device_constructs;
#[path = "device_examples.rs"]
mod device_examples;
#[path = "device_f64_math.rs"]
mod device_f64_math;
#[path = "device_faults.rs"]
mod device_faults;
#[path = "device_float_rem.rs"]
mod device_float_rem;
#[path = "device_jit.rs"]
mod device_jit;
#[path = "device_teams.rs"]
mod device_teams;
#[path = "doc_snippets.rs"]
mod doc_snippets;
#[path = "engine_api.rs"]
mod engine_api;
#[path = "engine_interop.rs"]
mod engine_interop;
#[path = "engine_ndarray.rs"]
mod engine_ndarray;
#[path = "engine_program.rs"]
mod engine_program;
#[path = "engine_register.rs"]
mod engine_register;
#[path = "engine_thread.rs"]
mod engine_thread;
#[path = "examples_embed.rs"]
mod examples_embed;
#[path = "fmt.rs"]
mod fmt;
#[path = "globals.rs"]
mod globals;
#[path = "host_builtins.rs"]
mod host_builtins;
#[path = "host_cli.rs"]
mod host_cli;
#[path = "host_errors.rs"]
mod host_errors;
#[path = "host_examples.rs"]
mod host_examples;
#[path = "host_fuzz.rs"]
mod host_fuzz;
#[path = "host_par.rs"]
mod host_par;
#[path = "host_present.rs"]
mod host_present;
#[path = "host_races.rs"]
mod host_races;
#[path = "imports.rs"]
mod imports;
#[path = "kernels_loop.rs"]
mod kernels_loop;
#[path = "lazy_sync.rs"]
mod lazy_sync;
#[path = "limits.rs"]
mod limits;
#[path = "loop_cap.rs"]
mod loop_cap;
#[path = "loop_forms.rs"]
mod loop_forms;
#[path = "loop_levels.rs"]
mod loop_levels;
#[path = "lsp.rs"]
mod lsp;
#[path = "mpi.rs"]
mod mpi;
#[path = "openacc_reductions.rs"]
mod openacc_reductions;
#[path = "openacc_semantics.rs"]
mod openacc_semantics;
#[path = "private_arrays.rs"]
mod private_arrays;
#[path = "private_atomics.rs"]
mod private_atomics;
#[path = "region_gang_loops.rs"]
mod region_gang_loops;
#[path = "repl_pty.rs"]
mod repl_pty;
#[path = "sections_nd.rs"]
mod sections_nd;
#[path = "serial_loop.rs"]
mod serial_loop;
#[path = "shift_counts.rs"]
mod shift_counts;
#[path = "strings.rs"]
mod strings;
#[path = "texel_reads.rs"]
mod texel_reads;
#[path = "tuples.rs"]
mod tuples;
#[path = "update_races.rs"]
mod update_races;
#[path = "validation_env.rs"]
mod validation_env;
#[path = "watchdog_bounds.rs"]
mod watchdog_bounds;
#[path = "xsbench.rs"]
mod xsbench;
