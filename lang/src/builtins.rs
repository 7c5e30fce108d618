//! The interface between the checker and the standard library.
//!
//! The checker knows no builtin by name: the `stdlib` crate (and an embedding
//! host, through `Engine::register_fn`) fills a [`Builtins`] table with each
//! function's typing rule and effects, and the checker consults it. A rule is
//! a plain function from argument types to a signature, which is enough for
//! the polymorphic builtins (`zeros(T, dims..)`, `min(a, b)`, `print(..)`).

use crate::types::Type;
use crate::value::Value;
use std::collections::HashMap;
use std::fmt;

/// Index of a builtin in its [`Builtins`] table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuiltinId(pub u32);

/// What a builtin does besides computing its result; decides where it may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Pure math: legal on the device.
    Pure,
    /// An atomic read-modify-write of an array element: device and host.
    Atomic,
    /// Allocates an array.
    Alloc,
    /// Input/output or the clock (`print`, `write_png`, `clock`).
    Io,
    /// Host-side only for another reason (device API, whole-array reductions).
    Host,
}

impl Effect {
    pub fn device_legal(self) -> bool {
        matches!(self, Effect::Pure | Effect::Atomic)
    }
    /// Why a builtin of this effect cannot run in a kernel.
    pub fn reason(self) -> &'static str {
        match self {
            Effect::Pure | Effect::Atomic => "",
            Effect::Alloc => "allocates an array",
            Effect::Io => "does input/output",
            Effect::Host => "runs only on the host",
        }
    }
}

/// The concrete signature of one call: what each argument is coerced to and
/// what the call returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Sig {
    pub params: Vec<Type>,
    pub ret: Type,
}

/// A typing rule: given argument types (literals still untyped), the call's
/// signature or a message saying what is wrong.
pub type TypingRule = fn(&[Type]) -> Result<Sig, String>;

#[derive(Clone)]
pub enum Typing {
    Fixed {
        params: Vec<Type>,
        ret: Type,
    },
    Rule(TypingRule),
    /// Like `Fixed`, with parameters that take any array or any array of
    /// one element type (an embedder's Rust function on arrays).
    Params {
        params: Vec<Param>,
        ret: Type,
    },
}

/// A parameter of [`Typing::Params`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// Exactly this type (literals take it).
    Is(Type),
    /// Any array.
    AnyArray,
    /// An array of this element type, of any rank.
    ArrayOf(crate::types::Scalar),
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Param::Is(t) => write!(f, "{t}"),
            Param::AnyArray => f.write_str("array"),
            Param::ArrayOf(s) => write!(f, "{s}[..]"),
        }
    }
}

fn arity(want: usize, got: usize) -> Result<(), String> {
    if want == got {
        return Ok(());
    }
    Err(format!(
        "takes {} argument{} but {} {} given",
        want,
        if want == 1 { "" } else { "s" },
        got,
        if got == 1 { "was" } else { "were" }
    ))
}

impl fmt::Debug for Typing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Typing::Fixed { params, ret } => write!(f, "Fixed({params:?} -> {ret:?})"),
            Typing::Rule(_) => f.write_str("Rule"),
            Typing::Params { params, ret } => write!(f, "Params({params:?} -> {ret:?})"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Builtin {
    pub name: String,
    pub typing: Typing,
    pub effect: Effect,
    /// `name(args) -> ret`, shown in help and completion.
    pub synopsis: String,
    /// The first argument must be an array element (`atomic_add(a[k], v)`).
    pub place_arg: bool,
    /// An array argument may be a section (`mpi_sendrecv(a[0:1], up, a[n:1],
    /// down)`), checked as a data clause's section is. Each array argument
    /// then reaches the typing rule and the implementation as the array
    /// followed, per axis of its rank, by `lo` and `count` as `i64` (a whole
    /// axis, `:` or the array written alone, as two [`WHOLE_AXIS`]): see
    /// [`section_arg`].
    pub sections: bool,
}

/// The `lo` and `count` that stand for a whole axis in the bounds of a
/// section argument ([`Builtin::sections`]): no section bound a script
/// writes by mistake (`a[0:n - 1]` with `n` 0 is a negative count, an
/// error) looks like it.
pub const WHOLE_AXIS: i64 = i64::MIN;

/// At `args[*i]`, an array argument of a [`Builtin::sections`] builtin: its
/// type, after which `2 * rank` `i64` bounds follow. Advances `*i` past them.
pub fn section_arg(args: &[Type], i: &mut usize) -> Option<(crate::types::Scalar, u8)> {
    match args.get(*i) {
        Some(Type::Array(s, r)) => {
            let end = *i + 1 + 2 * *r as usize;
            if end > args.len() || args[*i + 1..end].iter().any(|t| *t != Type::I64) {
                return None;
            }
            *i = end;
            Some((*s, *r))
        }
        _ => None,
    }
}

impl Builtin {
    /// Type a call with these argument types.
    pub fn sig(&self, args: &[Type]) -> Result<Sig, String> {
        match &self.typing {
            Typing::Fixed { params, ret } => {
                arity(params.len(), args.len())?;
                Ok(Sig {
                    params: params.clone(),
                    ret: *ret,
                })
            }
            Typing::Rule(rule) => rule(args),
            Typing::Params { params, ret } => {
                arity(params.len(), args.len())?;
                let mut out = Vec::with_capacity(params.len());
                for (i, (p, &a)) in params.iter().zip(args).enumerate() {
                    out.push(match (*p, a) {
                        (Param::Is(t), _) => t,
                        (Param::AnyArray, Type::Array(..)) => a,
                        (Param::ArrayOf(s), Type::Array(e, _)) if e == s => a,
                        (p, a) => {
                            return Err(format!(
                                "takes {} as argument {}, not `{a}`",
                                match p {
                                    Param::ArrayOf(s) => format!("an array of `{s}`"),
                                    _ => "an array".to_string(),
                                },
                                i + 1
                            ))
                        }
                    });
                }
                Ok(Sig {
                    params: out,
                    ret: *ret,
                })
            }
        }
    }
}

/// The table of builtin functions and constants a program is checked against.
#[derive(Debug, Clone, Default)]
pub struct Builtins {
    list: Vec<Builtin>,
    by_name: HashMap<String, BuiltinId>,
    consts: HashMap<(String, String), Value>,
}

impl Builtins {
    pub fn new() -> Builtins {
        Builtins::default()
    }
    /// Add (or replace) a builtin; returns its id.
    pub fn add(&mut self, b: Builtin) -> BuiltinId {
        if let Some(&id) = self.by_name.get(&b.name) {
            self.list[id.0 as usize] = b;
            return id;
        }
        let id = BuiltinId(self.list.len() as u32);
        self.by_name.insert(b.name.clone(), id);
        self.list.push(b);
        id
    }
    /// Add a constant reachable as `owner::name` (`f32::MAX`).
    pub fn add_const(&mut self, owner: &str, name: &str, v: Value) {
        self.consts.insert((owner.to_string(), name.to_string()), v);
    }
    pub fn lookup(&self, name: &str) -> Option<BuiltinId> {
        self.by_name.get(name).copied()
    }
    pub fn get(&self, id: BuiltinId) -> &Builtin {
        &self.list[id.0 as usize]
    }
    pub fn constant(&self, owner: &str, name: &str) -> Option<Value> {
        self.consts
            .get(&(owner.to_string(), name.to_string()))
            .copied()
    }
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|b| b.name.as_str())
    }
    pub fn const_names(&self) -> impl Iterator<Item = String> + '_ {
        self.consts.keys().map(|(o, n)| format!("{o}::{n}"))
    }
    pub fn iter(&self) -> impl Iterator<Item = (BuiltinId, &Builtin)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, b)| (BuiltinId(i as u32), b))
    }
}
