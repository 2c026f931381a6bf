//! The CPU's vector instructions, found once per process, for every kernel in the crate.
//!
//! Why one place: the markup and word scanners, the sparse products, the k-means distances and
//! the encoder each have a wide body and a portable one. They all ask [`level`], so a run uses
//! one level throughout, and `TOPICMAP_DEBUG_SIMD` lowers it for every kernel at once: CI runs
//! the test suite a second time with `TOPICMAP_DEBUG_SIMD=base`, so each portable fallback is
//! tested on a machine whose CPU would never pick it.
//!
//! Every kernel gives the same bits at every level (each says how: the same operations in the
//! same order, only wider), so the level changes speed, never an output.
//!
//! [`wide!`](crate::wide) builds a function's body once per level, for the elementwise loops
//! that the compiler vectorises by itself once it may use the wider instructions.

use std::sync::OnceLock;

/// The widest vector instructions the kernels may use (ordered: each level has the ones
/// below it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// The build's baseline (SSE2 on x86-64), and every other architecture.
    Base,
    /// AVX: 8 floats a register.
    Avx,
    /// AVX2 with FMA: 32 bytes a compare, fused multiply-adds.
    Avx2,
    /// AVX-512F (with AVX2 and FMA): 16 floats a register.
    Avx512,
}

impl Level {
    /// The name `TOPICMAP_DEBUG_SIMD` takes.
    pub fn name(self) -> &'static str {
        match self {
            Level::Base => "base",
            Level::Avx => "avx",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    fn parse(s: &str) -> Option<Level> {
        [Level::Base, Level::Avx, Level::Avx2, Level::Avx512]
            .into_iter()
            .find(|l| l.name() == s)
    }
}

/// The level every kernel uses: the CPU's, lowered by `TOPICMAP_DEBUG_SIMD=base|avx|avx2` (a
/// value above the CPU's, or not a level, changes nothing). Found on the first call.
#[inline]
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        let asked = std::env::var("TOPICMAP_DEBUG_SIMD").ok();
        lowered(cpu(), asked.as_deref())
    })
}

/// Whether the kernels may use `at_least`'s instructions.
#[inline]
pub fn has(at_least: Level) -> bool {
    level() >= at_least
}

/// The CPU's own level (what [`level`] starts from; tests that compare a kernel with its
/// portable twin ask this, so that they run both whatever the debug variable says).
pub fn cpu() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx2") && has!("fma");
        if avx2 && has!("avx512f") {
            return Level::Avx512;
        }
        if avx2 {
            return Level::Avx2;
        }
        if has!("avx") {
            return Level::Avx;
        }
    }
    Level::Base
}

/// The 8-bit dot-product instructions (VNNI) the int8 kernels may use at `level`: AVX-512
/// VNNI needs the AVX-512 level, AVX-VNNI the AVX2 one; so `TOPICMAP_DEBUG_SIMD` lowers them
/// as it lowers every kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vnni {
    /// `vpdpbusd` on 512-bit registers (AVX-512 VNNI, with AVX-512BW).
    Avx512,
    /// `vpdpbusd` on 256-bit registers (AVX-VNNI).
    Avx,
}

/// The widest VNNI this CPU has at or below `level`.
pub fn vnni_at(level: Level) -> Option<Vnni> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if level >= Level::Avx512 && has!("avx512vnni") && has!("avx512bw") {
            return Some(Vnni::Avx512);
        }
        if level >= Level::Avx2 && has!("avxvnni") {
            return Some(Vnni::Avx);
        }
    }
    let _ = level;
    None
}

/// `cpu` lowered to the level `asked` names, if any.
fn lowered(cpu: Level, asked: Option<&str>) -> Level {
    asked.and_then(Level::parse).map_or(cpu, |l| l.min(cpu))
}

/// Asks the CPU to start loading the cache line at `at` (a hint: it reads nothing, never faults
/// and changes no result; nothing on other architectures).
#[inline(always)]
pub fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and never faults, whatever the address; SSE is part of
    // the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// `fn name(args) body`, compiled once per level (AVX-512, AVX2, the baseline) and run at the
/// widest [`level`] allows. The body is `#[inline(always)]`, so its loops are built inside each
/// twin. Rust never fuses a multiply and an add on its own, so a body whose sums have a fixed
/// order gives the same bits in every twin.
#[macro_export]
macro_rules! wide {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) {
            #[inline(always)]
            fn body($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f")]
                fn avx512($($arg: $ty),*) {
                    body($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                fn avx2($($arg: $ty),*) {
                    body($($arg),*)
                }
                match $crate::simd::level() {
                    // SAFETY: the CPU has AVX-512F (`simd::level` never exceeds the CPU's).
                    $crate::simd::Level::Avx512 => return unsafe { avx512($($arg),*) },
                    // SAFETY: the CPU has AVX2 and FMA.
                    $crate::simd::Level::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::simd::Level::Avx | $crate::simd::Level::Base => {}
                }
            }
            body($($arg),*)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_debug_variable_only_lowers_the_level() {
        assert_eq!(lowered(Level::Avx2, Some("base")), Level::Base);
        assert_eq!(lowered(Level::Avx2, Some("avx")), Level::Avx);
        assert_eq!(lowered(Level::Avx2, Some("avx512")), Level::Avx2);
        assert_eq!(lowered(Level::Avx512, Some("avx2")), Level::Avx2);
        assert_eq!(lowered(Level::Avx512, Some("sse9")), Level::Avx512);
        assert_eq!(lowered(Level::Avx, None), Level::Avx);
    }

    #[test]
    fn the_level_in_use_is_at_most_the_cpus() {
        assert!(level() <= cpu());
        for l in [Level::Base, Level::Avx, Level::Avx2, Level::Avx512] {
            assert_eq!(Level::parse(l.name()), Some(l));
        }
    }
}
