//! What a device is to a program: the answers of `acc_get_property` and
//! `acc_get_device_type`. Each backend describes its own devices; the
//! host reference's memory ([`host_memory`]) is here because that answer
//! is every backend's default. Nothing here names the context, so it sits
//! below the `Backend` trait that reports it.

/// A device as `acc_get_property` describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceProps {
    pub name: String,
    pub vendor: String,
    pub driver: String,
    /// `acc_get_device_type()`: `"gpu"`, `"cpu"` (a CPU Vulkan driver such
    /// as lavapipe), `"host"` (the host reference) or `"other"`.
    pub kind: &'static str,
    /// Bytes of device memory (device-local heaps; the host's RAM for the
    /// host reference, 0 when unknown).
    pub memory: u64,
    /// `acc_get_property(.., "free_memory")`: `memory` less what accl's
    /// arrays hold on the device now (the host's available RAM for the
    /// host reference).
    pub free_memory: u64,
}

/// Total RAM from `/proc/meminfo` (0 where there is none).
pub fn host_memory() -> u64 {
    meminfo("MemTotal:")
}

/// RAM available to new allocations, from `/proc/meminfo` (0 where there
/// is none).
pub fn host_available() -> u64 {
    meminfo("MemAvailable:")
}

fn meminfo(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with(key))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}
