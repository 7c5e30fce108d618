//! Storage-buffer loads against texel-buffer loads on a CPU Vulkan driver
//! (lavapipe), where an SSBO load at a per-lane index is a scalar loop over
//! the lanes and a texel fetch may gather (a measurement, not run in CI):
//!
//!     cargo run --release -p vk-runtime --example texel_fetch [-- rounds]
//!
//! robustBufferAccess is enabled as accl enables it (`TEXEL_ROBUST=0`: off).
//!
//! Uses ash directly. Kernels are SPIR-V assembly assembled at run time by
//! `spirv-as` and checked by `spirv-val` (target env vulkan1.2). Each kernel
//! has local size 256 and a grid-stride loop over `n` (a push constant),
//! dispatched as 256 work groups:
//!
//! * `ssbo`: saxpy `y[i] = a * x[i] + y[i]`, x and y storage buffers.
//! * `texel`: the same, x and y read through uniform texel buffers (R32f
//!   views), y written through a storage buffer bound to y's buffer.
//! * `stexel`: reads as `texel`, the store an `OpImageWrite` to a storage
//!   texel buffer (R32f) on y's buffer.
//! * `simage`: loads and store all through storage texel buffers.
//! * `st_ssbo` / `st_texel`: `out[i] = 0.25 * (x[i-1] + x[i+1] + x[i-W] +
//!   x[i+W])` over the interior of a 1024x1024 grid, x an SSBO or a uniform
//!   texel buffer, out an SSBO.
//!
//! Each kernel's result is checked against the CPU first. Timing: rounds of
//! one submit of every kernel in turn (interleaved), each a pre-recorded
//! command buffer submitted and waited for with a fence, wall clock; three
//! warm-up rounds, then `rounds` (21 by default) timed; medians printed.

use std::process::Command;
use std::time::Instant;

use ash::vk;

const N: u32 = 1 << 20;
const W: u32 = 1024;
const H: u32 = 1024;
const GROUPS: u32 = 256;
const A: f32 = 0.5;

// ---------------------------------------------------------------- SPIR-V

/// How a kernel reaches one array.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Storage buffer (`StorageBuffer` runtime array of f32).
    Ssbo,
    /// Uniform texel buffer, `OpImageFetch`.
    Texel,
    /// Storage texel buffer (R32f), `OpImageRead` / `OpImageWrite`.
    STexel,
}

impl Kind {
    fn descriptor(self) -> vk::DescriptorType {
        match self {
            Kind::Ssbo => vk::DescriptorType::STORAGE_BUFFER,
            Kind::Texel => vk::DescriptorType::UNIFORM_TEXEL_BUFFER,
            Kind::STexel => vk::DescriptorType::STORAGE_TEXEL_BUFFER,
        }
    }
}

/// Builds one module: bindings `%b0..` of the given kinds, push constants
/// `{ u32 n; f32 a; u32 w; u32 h; }`, a grid-stride loop whose body is
/// `body` (the index is `%i`, u32).
fn module(kinds: &[Kind], body: &str) -> String {
    let mut s = String::from("OpCapability Shader\n");
    if kinds.contains(&Kind::Texel) {
        s += "OpCapability SampledBuffer\n";
    }
    if kinds.contains(&Kind::STexel) {
        s += "OpCapability ImageBuffer\n";
    }
    // SPIR-V 1.4+: every global the entry point uses is an interface id.
    let globals: String = (0..kinds.len()).map(|k| format!(" %b{k}")).collect();
    s += &format!(
        "OpMemoryModel Logical GLSL450\nOpEntryPoint GLCompute %main \"main\" %gid %nwg %pc{globals}\n"
    );
    s += r#"OpExecutionMode %main LocalSize 256 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %nwg BuiltIn NumWorkgroups
OpDecorate %rta ArrayStride 4
OpMemberDecorate %Buf 0 Offset 0
OpDecorate %Buf Block
OpMemberDecorate %PC 0 Offset 0
OpMemberDecorate %PC 1 Offset 4
OpMemberDecorate %PC 2 Offset 8
OpMemberDecorate %PC 3 Offset 12
OpDecorate %PC Block
"#;
    for (k, _) in kinds.iter().enumerate() {
        s += &format!("OpDecorate %b{k} DescriptorSet 0\nOpDecorate %b{k} Binding {k}\n");
    }
    s += r#"%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
%f32 = OpTypeFloat 32
%bool = OpTypeBool
%v3u = OpTypeVector %u32 3
%v4f = OpTypeVector %f32 4
%rta = OpTypeRuntimeArray %f32
%Buf = OpTypeStruct %rta
%pBuf = OpTypePointer StorageBuffer %Buf
%pSf = OpTypePointer StorageBuffer %f32
%PC = OpTypeStruct %u32 %f32 %u32 %u32
%pPC = OpTypePointer PushConstant %PC
%pPCu = OpTypePointer PushConstant %u32
%pPCf = OpTypePointer PushConstant %f32
%pIn = OpTypePointer Input %v3u
%pc = OpVariable %pPC PushConstant
%gid = OpVariable %pIn Input
%nwg = OpVariable %pIn Input
%c0 = OpConstant %u32 0
%c1 = OpConstant %u32 1
%c2 = OpConstant %u32 2
%c3 = OpConstant %u32 3
%c256 = OpConstant %u32 256
%f0 = OpConstant %f32 0
%f1 = OpConstant %f32 1
%fq = OpConstant %f32 0.25
"#;
    if kinds.contains(&Kind::Texel) {
        s += "%timg = OpTypeImage %f32 Buffer 0 0 0 1 Unknown\n%pTimg = OpTypePointer UniformConstant %timg\n";
    }
    if kinds.contains(&Kind::STexel) {
        s += "%simg = OpTypeImage %f32 Buffer 0 0 0 2 R32f\n%pSimg = OpTypePointer UniformConstant %simg\n";
    }
    for (k, kind) in kinds.iter().enumerate() {
        s += &match kind {
            Kind::Ssbo => format!("%b{k} = OpVariable %pBuf StorageBuffer\n"),
            Kind::Texel => format!("%b{k} = OpVariable %pTimg UniformConstant\n"),
            Kind::STexel => format!("%b{k} = OpVariable %pSimg UniformConstant\n"),
        };
    }
    s += r#"%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3u %gid
%i0 = OpCompositeExtract %u32 %g 0
%nw = OpLoad %v3u %nwg
%nwx = OpCompositeExtract %u32 %nw 0
%stride = OpIMul %u32 %nwx %c256
%np = OpAccessChain %pPCu %pc %c0
%n = OpLoad %u32 %np
%ap = OpAccessChain %pPCf %pc %c1
%a = OpLoad %f32 %ap
%wp = OpAccessChain %pPCu %pc %c2
%w = OpLoad %u32 %wp
%hp = OpAccessChain %pPCu %pc %c3
%h = OpLoad %u32 %hp
OpBranch %header
%header = OpLabel
%i = OpPhi %u32 %i0 %entry %inext %cont
OpLoopMerge %merge %cont None
OpBranch %test
%test = OpLabel
%more = OpULessThan %bool %i %n
OpBranchConditional %more %body %merge
%body = OpLabel
"#;
    s += body;
    s += r#"OpBranch %cont
%cont = OpLabel
%inext = OpIAdd %u32 %i %stride
OpBranch %header
%merge = OpLabel
OpReturn
OpFunctionEnd
"#;
    s
}

/// Loads binding `b` (of kind `kind`) at u32 index `idx` into `%{out}`.
fn load(kind: Kind, b: usize, idx: &str, out: &str) -> String {
    match kind {
        Kind::Ssbo => format!(
            "%{out}_p = OpAccessChain %pSf %b{b} %c0 {idx}\n%{out} = OpLoad %f32 %{out}_p\n"
        ),
        Kind::Texel => format!(
            "%{out}_im = OpLoad %timg %b{b}\n%{out}_v = OpImageFetch %v4f %{out}_im {idx}\n\
             %{out} = OpCompositeExtract %f32 %{out}_v 0\n"
        ),
        Kind::STexel => format!(
            "%{out}_im = OpLoad %simg %b{b}\n%{out}_v = OpImageRead %v4f %{out}_im {idx}\n\
             %{out} = OpCompositeExtract %f32 %{out}_v 0\n"
        ),
    }
}

/// Stores `%{val}` to binding `b` at u32 index `idx`.
fn store(kind: Kind, b: usize, idx: &str, val: &str) -> String {
    match kind {
        Kind::Ssbo => format!("%st_p = OpAccessChain %pSf %b{b} %c0 {idx}\nOpStore %st_p %{val}\n"),
        Kind::STexel => format!(
            "%st_im = OpLoad %simg %b{b}\n%st_v = OpCompositeConstruct %v4f %{val} %f0 %f0 %f1\n\
             OpImageWrite %st_im {idx} %st_v\n"
        ),
        Kind::Texel => unreachable!("uniform texel buffers are read-only"),
    }
}

/// saxpy: bindings 0 = x (read), 1 = y (read), 2 = y (written).
fn saxpy(read: Kind, write: Kind) -> String {
    let mut body = load(read, 0, "%i", "xv");
    body += &load(read, 1, "%i", "yv");
    body += "%ax = OpFMul %f32 %a %xv\n%r = OpFAdd %f32 %ax %yv\n";
    body += &store(write, 2, "%i", "r");
    module(&[read, read, write], &body)
}

/// Stencil: binding 0 = x (read), 1 = out (SSBO).
fn stencil(read: Kind) -> String {
    let mut body = String::from(
        r#"%row = OpUDiv %u32 %i %w
%rw = OpIMul %u32 %row %w
%col = OpISub %u32 %i %rw
%hm1 = OpISub %u32 %h %c1
%wm1 = OpISub %u32 %w %c1
%k1 = OpUGreaterThanEqual %bool %row %c1
%k2 = OpULessThan %bool %row %hm1
%k3 = OpUGreaterThanEqual %bool %col %c1
%k4 = OpULessThan %bool %col %wm1
%k12 = OpLogicalAnd %bool %k1 %k2
%k34 = OpLogicalAnd %bool %k3 %k4
%inside = OpLogicalAnd %bool %k12 %k34
OpSelectionMerge %skip None
OpBranchConditional %inside %then %skip
%then = OpLabel
%il = OpISub %u32 %i %c1
%ir = OpIAdd %u32 %i %c1
%iu = OpISub %u32 %i %w
%id = OpIAdd %u32 %i %w
"#,
    );
    body += &load(read, 0, "%il", "vl");
    body += &load(read, 0, "%ir", "vr");
    body += &load(read, 0, "%iu", "vu");
    body += &load(read, 0, "%id", "vd");
    body += "%s1 = OpFAdd %f32 %vl %vr\n%s2 = OpFAdd %f32 %s1 %vu\n%s3 = OpFAdd %f32 %s2 %vd\n\
             %r = OpFMul %f32 %s3 %fq\n";
    body += &store(Kind::Ssbo, 1, "%i", "r");
    body += "OpBranch %skip\n%skip = OpLabel\n";
    module(&[read, Kind::Ssbo], &body)
}

/// Assembles and validates `asm`, returns the words.
fn assemble(name: &str, asm: &str) -> Vec<u32> {
    let dir = std::env::temp_dir();
    let stem = format!("texel_fetch_{}_{name}", std::process::id());
    let src = dir.join(format!("{stem}.spvasm"));
    let bin = dir.join(format!("{stem}.spv"));
    std::fs::write(&src, asm).unwrap();
    let run = |cmd: &mut Command, what: &str| {
        let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        if !out.status.success() {
            eprintln!("{asm}");
            panic!(
                "{what} failed on {name}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    run(
        Command::new("spirv-as")
            .args(["--target-env", "vulkan1.2", "-o"])
            .arg(&bin)
            .arg(&src),
        "spirv-as",
    );
    run(
        Command::new("spirv-val")
            .args(["--target-env", "vulkan1.2"])
            .arg(&bin),
        "spirv-val",
    );
    let bytes = std::fs::read(&bin).unwrap();
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&bin);
    ash::util::read_spv(&mut std::io::Cursor::new(bytes)).unwrap()
}

// ---------------------------------------------------------------- Vulkan

struct Ctx {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    queue: vk::Queue,
    mem_props: vk::PhysicalDeviceMemoryProperties,
    cmd_pool: vk::CommandPool,
    fence: vk::Fence,
}

/// A host-visible, persistently mapped f32 buffer with an R32_SFLOAT view.
struct Buf {
    buf: vk::Buffer,
    mem: vk::DeviceMemory,
    view: vk::BufferView,
    ptr: *mut f32,
    len: usize,
}

impl Buf {
    fn slice(&mut self) -> &mut [f32] {
        // SAFETY: `ptr` maps `len` f32s for the buffer's lifetime; the
        // device is idle whenever the host looks (fence waited).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

struct Kernel {
    name: &'static str,
    module: vk::ShaderModule,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
    cmd: vk::CommandBuffer,
}

impl Ctx {
    fn new() -> (Ctx, vk::PhysicalDevice) {
        // SAFETY: as vk-runtime/src/instance.rs: load the system loader,
        // kept loaded by the Entry stored in Ctx.
        let entry = unsafe { ash::Entry::load() }.expect("Vulkan loader");
        let version = unsafe { entry.try_enumerate_instance_version() }
            .unwrap()
            .unwrap_or(vk::API_VERSION_1_0);
        assert!(version >= vk::API_VERSION_1_2, "Vulkan 1.2 loader needed");
        let app = vk::ApplicationInfo::default()
            .application_name(c"texel_fetch")
            .engine_name(c"accl")
            .api_version(vk::API_VERSION_1_3.min(version));
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        let instance = unsafe { entry.create_instance(&info, None) }.unwrap();
        let pd = unsafe { instance.enumerate_physical_devices() }.unwrap()[0];
        let qfi = unsafe { instance.get_physical_device_queue_family_properties(pd) }
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .expect("a compute queue") as u32;
        let prio = [1.0f32];
        let qinfo = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(qfi)
            .queue_priorities(&prio)];
        // robustBufferAccess as accl enables it (where the device has it);
        // TEXEL_ROBUST=0 leaves it off.
        let avail = unsafe { instance.get_physical_device_features(pd) };
        let robust = avail.robust_buffer_access == vk::TRUE
            && std::env::var_os("TEXEL_ROBUST").is_none_or(|v| v != "0");
        println!("robustBufferAccess: {robust}");
        let features = vk::PhysicalDeviceFeatures::default().robust_buffer_access(robust);
        let dinfo = vk::DeviceCreateInfo::default()
            .queue_create_infos(&qinfo)
            .enabled_features(&features);
        let device = unsafe { instance.create_device(pd, &dinfo, None) }.unwrap();
        let queue = unsafe { device.get_device_queue(qfi, 0) };
        let mem_props = unsafe { instance.get_physical_device_memory_properties(pd) };
        let cmd_pool = unsafe {
            device.create_command_pool(
                &vk::CommandPoolCreateInfo::default().queue_family_index(qfi),
                None,
            )
        }
        .unwrap();
        let fence = unsafe { device.create_fence(&vk::FenceCreateInfo::default(), None) }.unwrap();
        (
            Ctx {
                _entry: entry,
                instance,
                device,
                queue,
                mem_props,
                cmd_pool,
                fence,
            },
            pd,
        )
    }

    fn buffer(&self, len: usize) -> Buf {
        let d = &self.device;
        let size = (len * 4) as u64;
        let info = vk::BufferCreateInfo::default().size(size).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
        );
        let buf = unsafe { d.create_buffer(&info, None) }.unwrap();
        let req = unsafe { d.get_buffer_memory_requirements(buf) };
        let want = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let ty = (0..self.mem_props.memory_type_count)
            .find(|&t| {
                req.memory_type_bits & (1 << t) != 0
                    && self.mem_props.memory_types[t as usize]
                        .property_flags
                        .contains(want)
            })
            .expect("host-visible coherent memory");
        let mem = unsafe {
            d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            )
        }
        .unwrap();
        unsafe { d.bind_buffer_memory(buf, mem, 0) }.unwrap();
        let ptr =
            unsafe { d.map_memory(mem, 0, size, vk::MemoryMapFlags::empty()) }.unwrap() as *mut f32;
        let view = unsafe {
            d.create_buffer_view(
                &vk::BufferViewCreateInfo::default()
                    .buffer(buf)
                    .format(vk::Format::R32_SFLOAT)
                    .offset(0)
                    .range(vk::WHOLE_SIZE),
                None,
            )
        }
        .unwrap();
        Buf {
            buf,
            mem,
            view,
            ptr,
            len,
        }
    }

    /// A pipeline over `binds` (binding k = binds[k]) with its descriptor
    /// set written and one command buffer recorded: barrier, dispatch,
    /// barrier to the host.
    fn kernel(
        &self,
        name: &'static str,
        asm: &str,
        binds: &[(Kind, &Buf)],
        push: [u32; 4],
    ) -> Kernel {
        let d = &self.device;
        let words = assemble(name, asm);
        let module = unsafe {
            d.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .unwrap();
        let lb: Vec<_> = binds
            .iter()
            .enumerate()
            .map(|(k, (kind, _))| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(k as u32)
                    .descriptor_type(kind.descriptor())
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let set_layout = unsafe {
            d.create_descriptor_set_layout(
                &vk::DescriptorSetLayoutCreateInfo::default().bindings(&lb),
                None,
            )
        }
        .unwrap();
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .size(16)];
        let layouts = [set_layout];
        let layout = unsafe {
            d.create_pipeline_layout(
                &vk::PipelineLayoutCreateInfo::default()
                    .set_layouts(&layouts)
                    .push_constant_ranges(&ranges),
                None,
            )
        }
        .unwrap();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        let pinfo = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)];
        let pipeline =
            unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &pinfo, None) }.unwrap()
                [0];
        let sizes: Vec<_> = lb
            .iter()
            .map(|b| {
                vk::DescriptorPoolSize::default()
                    .ty(b.descriptor_type)
                    .descriptor_count(1)
            })
            .collect();
        let pool = unsafe {
            d.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .max_sets(1)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .unwrap();
        let set = unsafe {
            d.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
        }
        .unwrap()[0];
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = binds
            .iter()
            .map(|(_, b)| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(b.buf)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let views: Vec<[vk::BufferView; 1]> = binds.iter().map(|(_, b)| [b.view]).collect();
        let writes: Vec<_> = binds
            .iter()
            .enumerate()
            .map(|(k, (kind, _))| {
                let w = vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(k as u32)
                    .descriptor_type(kind.descriptor());
                match kind {
                    Kind::Ssbo => w.buffer_info(&infos[k]),
                    _ => w.texel_buffer_view(&views[k]),
                }
            })
            .collect();
        unsafe { d.update_descriptor_sets(&writes, &[]) };

        let cmd = unsafe {
            d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.cmd_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(1),
            )
        }
        .unwrap()[0];
        let pbytes: Vec<u8> = push.iter().flat_map(|w| w.to_ne_bytes()).collect();
        unsafe {
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            // Earlier submissions' shader writes before this dispatch.
            shader_writes_before(
                d,
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
            );
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, layout, 0, &[set], &[]);
            d.cmd_push_constants(cmd, layout, vk::ShaderStageFlags::COMPUTE, 0, &pbytes);
            d.cmd_dispatch(cmd, GROUPS, 1, 1);
            shader_writes_before(
                d,
                cmd,
                vk::PipelineStageFlags::HOST,
                vk::AccessFlags::HOST_READ,
            );
            d.end_command_buffer(cmd).unwrap();
        }
        Kernel {
            name,
            module,
            set_layout,
            layout,
            pipeline,
            pool,
            cmd,
        }
    }

    /// Submits `k`'s command buffer and waits; returns the wall time in ms.
    fn run(&self, k: &Kernel) -> f64 {
        let d = &self.device;
        let cmds = [k.cmd];
        let submit = [vk::SubmitInfo::default().command_buffers(&cmds)];
        let t = Instant::now();
        unsafe {
            d.queue_submit(self.queue, &submit, self.fence).unwrap();
            d.wait_for_fences(&[self.fence], true, u64::MAX).unwrap();
        }
        let ms = t.elapsed().as_secs_f64() * 1e3;
        unsafe { d.reset_fences(&[self.fence]) }.unwrap();
        ms
    }

    fn destroy(self, kernels: Vec<Kernel>, bufs: Vec<Buf>) {
        let d = &self.device;
        unsafe {
            d.device_wait_idle().unwrap();
            for k in kernels {
                d.destroy_pipeline(k.pipeline, None);
                d.destroy_pipeline_layout(k.layout, None);
                d.destroy_descriptor_pool(k.pool, None);
                d.destroy_descriptor_set_layout(k.set_layout, None);
                d.destroy_shader_module(k.module, None);
            }
            for b in bufs {
                d.destroy_buffer_view(b.view, None);
                d.destroy_buffer(b.buf, None);
                d.free_memory(b.mem, None);
            }
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.cmd_pool, None);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn check(name: &str, got: &[f32], want: &[f32]) {
    let bad: Vec<_> = (0..want.len())
        .filter(|&i| {
            let (g, w) = (got[i], want[i]);
            !(g == w || (g - w).abs() <= 1e-6 * w.abs())
        })
        .collect();
    if !bad.is_empty() {
        let i = bad[0];
        panic!(
            "{name}: {} of {} elements differ from the CPU, first at {i}: {} != {}",
            bad.len(),
            want.len(),
            got[i],
            want[i]
        );
    }
    println!("{name}: matches the CPU ({} elements)", want.len());
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("rounds"))
        .unwrap_or(21);
    let (ctx, pd) = Ctx::new();
    let props = unsafe { ctx.instance.get_physical_device_properties(pd) };
    let fmt = unsafe {
        ctx.instance
            .get_physical_device_format_properties(pd, vk::Format::R32_SFLOAT)
    };
    let dev_name = props.device_name_as_c_str().unwrap_or(c"?");
    println!(
        "device: {}  maxTexelBufferElements: {}  minTexelBufferOffsetAlignment: {}",
        dev_name.to_string_lossy(),
        props.limits.max_texel_buffer_elements,
        props.limits.min_texel_buffer_offset_alignment
    );
    let bf = fmt.buffer_features;
    println!(
        "R32_SFLOAT bufferFeatures: {:?}\n  UNIFORM_TEXEL_BUFFER: {}  STORAGE_TEXEL_BUFFER: {}  \
         STORAGE_TEXEL_BUFFER_ATOMIC: {}",
        bf,
        bf.contains(vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER),
        bf.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER),
        bf.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER_ATOMIC),
    );
    assert!(bf.contains(vk::FormatFeatureFlags::UNIFORM_TEXEL_BUFFER));
    assert!(props.limits.max_texel_buffer_elements >= N.max(W * H));
    let storage_texel = bf.contains(vk::FormatFeatureFlags::STORAGE_TEXEL_BUFFER);

    let n = N as usize;
    let mut x = ctx.buffer(n);
    let mut y = ctx.buffer(n);
    let mut g = ctx.buffer((W * H) as usize);
    let mut o1 = ctx.buffer((W * H) as usize);
    let mut o2 = ctx.buffer((W * H) as usize);
    for (i, v) in x.slice().iter_mut().enumerate() {
        *v = i as f32 * 0.5;
    }
    for (i, v) in g.slice().iter_mut().enumerate() {
        *v = (i % 977) as f32;
    }
    o1.slice().fill(0.0);
    o2.slice().fill(0.0);

    let sax = [N, A.to_bits(), 0, 0];
    let sten = [W * H, 0, W, H];
    let mut kernels = vec![
        ctx.kernel(
            "ssbo",
            &saxpy(Kind::Ssbo, Kind::Ssbo),
            &[(Kind::Ssbo, &x), (Kind::Ssbo, &y), (Kind::Ssbo, &y)],
            sax,
        ),
        ctx.kernel(
            "texel",
            &saxpy(Kind::Texel, Kind::Ssbo),
            &[(Kind::Texel, &x), (Kind::Texel, &y), (Kind::Ssbo, &y)],
            sax,
        ),
    ];
    if storage_texel {
        kernels.push(ctx.kernel(
            "stexel",
            &saxpy(Kind::Texel, Kind::STexel),
            &[(Kind::Texel, &x), (Kind::Texel, &y), (Kind::STexel, &y)],
            sax,
        ));
        kernels.push(ctx.kernel(
            "simage",
            &saxpy(Kind::STexel, Kind::STexel),
            &[(Kind::STexel, &x), (Kind::STexel, &y), (Kind::STexel, &y)],
            sax,
        ));
    }
    let saxpy_count = kernels.len();
    kernels.push(ctx.kernel(
        "st_ssbo",
        &stencil(Kind::Ssbo),
        &[(Kind::Ssbo, &g), (Kind::Ssbo, &o1)],
        sten,
    ));
    kernels.push(ctx.kernel(
        "st_texel",
        &stencil(Kind::Texel),
        &[(Kind::Texel, &g), (Kind::Ssbo, &o2)],
        sten,
    ));

    // Correctness: one run of each from known inputs.
    let want_saxpy: Vec<f32> = (0..n).map(|i| A * (i as f32 * 0.5) + 1.0).collect();
    for k in &kernels[..saxpy_count] {
        y.slice().fill(1.0);
        ctx.run(k);
        check(k.name, y.slice(), &want_saxpy);
    }
    let (w, h) = (W as usize, H as usize);
    let gx = g.slice().to_vec();
    let want_st: Vec<f32> = (0..w * h)
        .map(|i| {
            let (r, c) = (i / w, i % w);
            if r >= 1 && r < h - 1 && c >= 1 && c < w - 1 {
                0.25 * (gx[i - 1] + gx[i + 1] + gx[i - w] + gx[i + w])
            } else {
                0.0
            }
        })
        .collect();
    ctx.run(&kernels[saxpy_count]);
    check("st_ssbo", o1.slice(), &want_st);
    ctx.run(&kernels[saxpy_count + 1]);
    check("st_texel", o2.slice(), &want_st);

    // Timing, interleaved.
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
    for round in 0..3 + rounds {
        for (k, t) in kernels.iter().zip(times.iter_mut()) {
            let ms = ctx.run(k);
            if round >= 3 {
                t.push(ms);
            }
        }
    }
    let med: Vec<f64> = times.into_iter().map(median).collect();
    println!("median of {rounds} (ms), 256 groups x 256:");
    for (k, m) in kernels.iter().zip(&med) {
        let base = if k.name.starts_with("st_") {
            med[saxpy_count]
        } else {
            med[0]
        };
        println!(
            "  {:9} {:8.3} ms   ratio to its ssbo: {:.3}",
            k.name,
            m,
            m / base
        );
    }
    ctx.destroy(kernels, vec![x, y, g, o1, o2]);
}

/// A barrier making compute-shader writes visible to `access` at `stage`.
///
/// # Safety
/// `cmd` is a command buffer of `d` in the recording state.
unsafe fn shader_writes_before(
    d: &ash::Device,
    cmd: vk::CommandBuffer,
    stage: vk::PipelineStageFlags,
    access: vk::AccessFlags,
) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(access)];
    unsafe {
        d.cmd_pipeline_barrier(
            cmd,
            vk::PipelineStageFlags::COMPUTE_SHADER,
            stage,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}
