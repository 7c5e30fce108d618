//! Host-set events: a queue that records [`crate::Queue::wait_host_event`] stops
//! there until the host calls [`HostEvent::set`]. They hold device work
//! back for as long as the host chooses, which makes "a wait that cannot
//! finish by itself" exact in tests of time limits, with no reliance on how
//! fast the device is.

use crate::device::{Device, DeviceShared};
use crate::error::{vkerr, Result};
use ash::vk;
use std::sync::Arc;

pub(crate) struct EventInner {
    pub(crate) raw: vk::Event,
    pub(crate) device: Arc<DeviceShared>,
}

impl Drop for EventInner {
    fn drop(&mut self) {
        // SAFETY: every batch that waits on it holds this Arc.
        unsafe { self.device.raw.destroy_event(self.raw, None) };
    }
}

/// A `VkEvent` the host sets (see the module documentation).
#[derive(Clone)]
pub struct HostEvent {
    pub(crate) inner: Arc<EventInner>,
}

impl HostEvent {
    /// A new event, not set.
    pub fn new(device: &Device) -> Result<HostEvent> {
        let info = vk::EventCreateInfo::default();
        let raw = unsafe { device.shared.raw.create_event(&info, None) }
            .map_err(vkerr("vkCreateEvent"))?;
        Ok(HostEvent {
            inner: Arc::new(EventInner {
                raw,
                device: device.shared.clone(),
            }),
        })
    }

    /// Set the event: queues waiting on it go on.
    pub fn set(&self) -> Result<()> {
        unsafe { self.inner.device.raw.set_event(self.inner.raw) }.map_err(vkerr("vkSetEvent"))
    }
}
