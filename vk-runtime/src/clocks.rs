//! Keeping an NVIDIA GPU at its working clocks while accl has it open.
//!
//! NVIDIA's driver drops an idle GPU to its lowest clocks a few seconds
//! after its last work (an H100: 345 MHz instead of 1980), and for Vulkan
//! work raises them again only after a few hundred milliseconds of it.
//! Measured on an H100 (driver 580.159): after 8 s of host-only work, a
//! compute-bound kernel of 0.53 ms took 3.0 ms for the next 225-350 ms of
//! kernels, and a 256 MiB saxpy ran at 1500 instead of 2600 GB/s. Any
//! script that spends a few seconds on the host (reading or generating its
//! data, say) before its kernels pays this. CUDA instead keeps a GPU at its
//! working clocks for as long as a context exists on it: the same burst
//! after the same idle ran at full speed under PyTorch, and under accl too
//! while another process merely held a CUDA context on the GPU.
//!
//! So on an NVIDIA device accl retains the CUDA primary context of the same
//! GPU (matched by UUID) for as long as the device is open, where the CUDA
//! driver library (`libcuda.so.1`) is installed. It runs no CUDA work; the
//! context takes about 0.5 GiB of device memory. It is shared with any CUDA
//! the host program uses (primary contexts are reference counted).
//! `ACCL_HOLD_CLOCKS=0` turns it off. The CUDA driver starts on a thread of
//! its own, so opening the device does not wait for it, and only once the
//! device has been open for [`HOLD_AFTER`]: creating a Vulkan device keeps
//! the clocks up for a few seconds anyway, and a short run (whose exit
//! would wait for the CUDA driver to start and stop, half a second on an
//! H100) never starts it.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

/// PCI vendor ID of NVIDIA.
const NVIDIA: u32 = 0x10de;

/// Whether the hold is in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockHoldState {
    /// Not tried: not an NVIDIA device, or `ACCL_HOLD_CLOCKS=0`.
    Off,
    /// Waiting for the device to have been open for [`HOLD_AFTER`], or the
    /// CUDA driver is starting.
    Starting,
    /// The CUDA primary context of this GPU is retained.
    Held,
    /// No CUDA driver, or no CUDA device with this UUID.
    Unavailable,
}

/// How long a device is open before its clocks are held.
pub const HOLD_AFTER: Duration = Duration::from_secs(1);

const STARTING: u8 = 1;
const HELD: u8 = 2;
const UNAVAILABLE: u8 = 3;

/// The thread that holds the context; dropping this releases it.
pub(crate) struct ClockHold {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    state: Arc<AtomicU8>,
}

impl ClockHold {
    /// Starts holding the clocks of the GPU with Vulkan `vendor_id` and
    /// `device_uuid` (`VkPhysicalDeviceIDProperties::deviceUUID`, which
    /// NVIDIA makes the CUDA device's UUID). `None` where it does not apply.
    pub(crate) fn start(vendor_id: u32, device_uuid: [u8; 16]) -> Option<ClockHold> {
        if vendor_id != NVIDIA || std::env::var_os("ACCL_HOLD_CLOCKS").is_some_and(|v| v == "0") {
            return None;
        }
        let state = Arc::new(AtomicU8::new(STARTING));
        let (stop, stopped) = mpsc::channel::<()>();
        let shown = state.clone();
        let thread = std::thread::Builder::new()
            .name("accl-clock-hold".into())
            .spawn(move || {
                // Until the device has been open a while; a device dropped
                // before then never touches CUDA.
                if !matches!(
                    stopped.recv_timeout(HOLD_AFTER),
                    Err(mpsc::RecvTimeoutError::Timeout)
                ) {
                    shown.store(UNAVAILABLE, Ordering::Release);
                    return;
                }
                // SAFETY: the library is the CUDA driver API (checked by its
                // symbols); each call follows its documented signature.
                let held = unsafe { Cuda::retain(&device_uuid) };
                shown.store(
                    if held.is_some() { HELD } else { UNAVAILABLE },
                    Ordering::Release,
                );
                // Until the device goes (the sender is dropped).
                let _ = stopped.recv();
                if let Some((cuda, dev)) = held {
                    // SAFETY: `dev` was retained above, once.
                    unsafe { (cuda.release)(dev) };
                }
            })
            .ok()?;
        Some(ClockHold {
            stop: Some(stop),
            thread: Some(thread),
            state,
        })
    }

    pub(crate) fn state(hold: Option<&ClockHold>) -> ClockHoldState {
        match hold.map(|h| h.state.load(Ordering::Acquire)) {
            None => ClockHoldState::Off,
            Some(STARTING) => ClockHoldState::Starting,
            Some(HELD) => ClockHoldState::Held,
            Some(_) => ClockHoldState::Unavailable,
        }
    }
}

impl Drop for ClockHold {
    fn drop(&mut self) {
        drop(self.stop.take());
        // Joined, so that no thread is inside the CUDA driver when the
        // process exits; the driver started while the device was in use,
        // so this rarely waits.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type CuResult = c_int;

/// The few CUDA driver API functions the hold needs.
struct Cuda {
    _lib: libloading::Library,
    release: unsafe extern "C" fn(c_int) -> CuResult,
}

impl Cuda {
    /// Loads the CUDA driver, finds the device with `uuid` and retains its
    /// primary context. `None` on any failure.
    unsafe fn retain(uuid: &[u8; 16]) -> Option<(Cuda, c_int)> {
        let lib = libloading::Library::new("libcuda.so.1").ok()?;
        let init: unsafe extern "C" fn(c_uint) -> CuResult = *lib.get(b"cuInit\0").ok()?;
        let count: unsafe extern "C" fn(*mut c_int) -> CuResult =
            *lib.get(b"cuDeviceGetCount\0").ok()?;
        let get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult =
            *lib.get(b"cuDeviceGet\0").ok()?;
        let get_uuid: unsafe extern "C" fn(*mut [u8; 16], c_int) -> CuResult =
            *lib.get(b"cuDeviceGetUuid\0").ok()?;
        let retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult =
            *lib.get(b"cuDevicePrimaryCtxRetain\0").ok()?;
        let release: unsafe extern "C" fn(c_int) -> CuResult = *lib
            .get(b"cuDevicePrimaryCtxRelease_v2\0")
            .or_else(|_| lib.get(b"cuDevicePrimaryCtxRelease\0"))
            .ok()?;
        if init(0) != 0 {
            return None;
        }
        let mut n = 0;
        if count(&mut n) != 0 {
            return None;
        }
        for ordinal in 0..n {
            let mut dev = 0;
            let mut id = [0u8; 16];
            if get(&mut dev, ordinal) != 0 || get_uuid(&mut id, dev) != 0 || id != *uuid {
                continue;
            }
            let mut ctx = std::ptr::null_mut();
            if retain(&mut ctx, dev) != 0 {
                return None;
            }
            return Some((Cuda { _lib: lib, release }, dev));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nvidia_devices_are_held() {
        assert!(
            ClockHold::start(0x10005, [0; 16]).is_none(),
            "lavapipe's vendor"
        );
        assert_eq!(ClockHold::state(None), ClockHoldState::Off);
    }

    #[test]
    fn a_gpu_that_cuda_does_not_know_is_left_alone() {
        // No CUDA device has the zero UUID: where there is no CUDA driver
        // (CI) the library does not load, elsewhere no device matches.
        // Either way the hold ends unavailable, and dropping it returns.
        let Some(h) = ClockHold::start(NVIDIA, [0; 16]) else {
            // ACCL_HOLD_CLOCKS=0 in this environment.
            return;
        };
        while ClockHold::state(Some(&h)) == ClockHoldState::Starting {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(ClockHold::state(Some(&h)), ClockHoldState::Unavailable);
        drop(h);
    }
}
