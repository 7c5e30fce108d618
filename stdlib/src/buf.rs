//! The element storage of one array: either a `Vec<T>` accl allocated, or
//! memory another library owns (a NumPy array's buffer), kept alive by an
//! owner object for as long as the storage lives.
//!
//! Both kinds are one pointer and one length, so reading an element is the
//! same slice access whatever the kind (the interpreter's hot path takes no
//! branch on it). Nothing in accl grows, shrinks or moves an array's
//! elements; the operations that hand a `Vec<T>` out ([`Buf::into_vec`],
//! and through it `Elem::from_data` and `Array::try_into_data`) copy
//! foreign memory into a new `Vec` first, and `Clone` always makes an owned
//! copy.

use std::any::Any;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Typed, contiguous element storage that derefs to `[T]`.
pub struct Buf<T> {
    ptr: NonNull<T>,
    len: usize,
    keep: Keep,
}

/// What frees the elements when the storage goes.
enum Keep {
    /// The capacity of the `Vec<T>` the elements came from.
    Vec(usize),
    /// The foreign memory's owner, dropped after the last use of the
    /// elements (it may release them).
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

impl<T> Buf<T> {
    /// Borrow `len` elements at `ptr`, which `owner` keeps alive: dropping
    /// the storage drops `owner`, nothing else.
    ///
    /// # Safety
    ///
    /// Until `owner` is dropped, `ptr` must be non-null, aligned for `T`
    /// and valid for reads and writes of `len` elements of `T`, each of
    /// them a valid `T` (for `bool`, every byte 0 or 1); the memory must
    /// not be freed, moved or resized. While the storage lives, accl reads
    /// and writes the elements as if it owned them: anything else may
    /// touch them only when accl is not running on them (between calls
    /// into the engine, with no device copy of them pending).
    pub unsafe fn from_foreign(
        ptr: *mut T,
        len: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Buf<T> {
        Buf {
            // A null pointer (possible only by breaking the contract) is
            // replaced by a dangling one, valid for zero elements.
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            len: if ptr.is_null() { 0 } else { len },
            keep: Keep::Foreign(owner),
        }
    }

    /// Whether the elements are foreign memory (not accl's own).
    pub fn is_foreign(&self) -> bool {
        matches!(self.keep, Keep::Foreign(_))
    }

    /// The elements as a `Vec`: moved out when they are accl's own,
    /// copied when they are foreign.
    pub fn into_vec(self) -> Vec<T>
    where
        T: Copy,
    {
        if let Keep::Vec(cap) = self.keep {
            let this = ManuallyDrop::new(self);
            // SAFETY: the parts of the `Vec` this storage was made from;
            // `this` is never dropped, so the `Vec` is rebuilt once.
            return unsafe { Vec::from_raw_parts(this.ptr.as_ptr(), this.len, cap) };
        }
        self.to_vec()
    }
}

// SAFETY: a `Buf` owns its elements as a `Vec` does (foreign ones by
// `from_foreign`'s contract, nothing else touching them meanwhile), and
// its owner is `Send + Sync`: it may go to or be shared with another
// thread exactly when a `Vec<T>` may.
unsafe impl<T: Send> Send for Buf<T> {}
unsafe impl<T: Sync> Sync for Buf<T> {}

impl<T> From<Vec<T>> for Buf<T> {
    fn from(v: Vec<T>) -> Buf<T> {
        let mut v = ManuallyDrop::new(v);
        Buf {
            // SAFETY: a `Vec`'s pointer is never null (dangling when it
            // has no allocation).
            ptr: unsafe { NonNull::new_unchecked(v.as_mut_ptr()) },
            len: v.len(),
            keep: Keep::Vec(v.capacity()),
        }
    }
}

impl<T> Drop for Buf<T> {
    fn drop(&mut self) {
        if let Keep::Vec(cap) = self.keep {
            // SAFETY: the parts of the `Vec` this storage took over, given
            // back once.
            drop(unsafe { Vec::from_raw_parts(self.ptr.as_ptr(), self.len, cap) });
        }
        // A foreign owner is dropped with `keep`, after the elements' last
        // use.
    }
}

impl<T> Deref for Buf<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` valid elements at `ptr`, owned (a `Vec`'s) or
        // kept alive by the owner (`from_foreign`'s contract).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for Buf<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` is the only way to the
        // elements in accl.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Copy> Clone for Buf<T> {
    /// An owned copy, whatever the kind.
    fn clone(&self) -> Buf<T> {
        Buf::from(self.to_vec())
    }
}

impl<T: PartialEq> PartialEq for Buf<T> {
    fn eq(&self, o: &Buf<T>) -> bool {
        **self == **o
    }
}

impl<T: fmt::Debug> fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn owned_round_trip_keeps_the_allocation() {
        let v = vec![1.5f32, 2.5, 3.5];
        let p = v.as_ptr();
        let b = Buf::from(v);
        assert!(!b.is_foreign());
        assert_eq!(&*b, &[1.5, 2.5, 3.5]);
        let v = b.into_vec();
        assert_eq!((v.as_ptr(), v), (p, vec![1.5, 2.5, 3.5]));
    }

    #[test]
    fn foreign_memory_is_written_in_place_and_its_owner_dropped_last() {
        // The owner is the memory itself (as a NumPy array owns its
        // buffer); the `Arc` counts who still holds it.
        let mut mem = vec![1i32, 2, 3, 4];
        let ptr = mem.as_mut_ptr();
        let owner = Arc::new(std::sync::Mutex::new(mem));
        let mut b = unsafe { Buf::from_foreign(ptr, 4, Box::new(owner.clone())) };
        assert!(b.is_foreign());
        b[2] = 30;
        assert_eq!(owner.lock().unwrap()[2], 30);
        assert_eq!(Arc::strong_count(&owner), 2);
        // A clone is an owned copy: writes to it stay in it.
        let mut c = b.clone();
        assert!(!c.is_foreign());
        c[0] = 10;
        assert_eq!((owner.lock().unwrap()[0], c[0]), (1, 10));
        // into_vec copies foreign memory and lets the owner go.
        let v = b.into_vec();
        assert_eq!(v, vec![1, 2, 30, 4]);
        assert_ne!(v.as_ptr(), owner.lock().unwrap().as_ptr());
        assert_eq!(Arc::strong_count(&owner), 1);
    }

    #[test]
    fn dropping_foreign_storage_drops_the_owner() {
        let mut mem = vec![7u8; 3];
        let owner = Arc::new(());
        let b = unsafe { Buf::from_foreign(mem.as_mut_ptr(), 3, Box::new(owner.clone())) };
        assert_eq!(Arc::strong_count(&owner), 2);
        drop(b);
        assert_eq!(Arc::strong_count(&owner), 1);
        assert_eq!(mem, vec![7, 7, 7]);
    }
}
