//! Findings, severities and the fixed catalog of categories.

use crate::span::Span;
use serde::{Deserialize, Serialize};

/// How bad a finding is. Ordered: `Low < Medium < High < Critical`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub const ALL: [Severity; 4] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    pub fn from_slug(s: &str) -> Option<Severity> {
        Severity::ALL
            .into_iter()
            .find(|v| v.slug() == s.to_ascii_lowercase())
    }
}

macro_rules! categories {
    ($( $variant:ident => $slug:literal, $sev:ident, $what:literal; )*) => {
        /// The bug classes of the catalog. The slug is part of the public
        /// contract: every finding carries one, and users select by it.
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        pub enum Category { $( $variant, )* }

        impl Category {
            pub const ALL: &'static [Category] = &[ $( Category::$variant, )* ];

            pub fn slug(self) -> &'static str {
                match self { $( Category::$variant => $slug, )* }
            }

            /// The catalog's baseline severity for the class.
            pub fn baseline(self) -> Severity {
                match self { $( Category::$variant => Severity::$sev, )* }
            }

            /// One line saying what the class of bug is.
            pub fn description(self) -> &'static str {
                match self { $( Category::$variant => $what, )* }
            }

            pub fn from_slug(s: &str) -> Option<Category> {
                match s { $( $slug => Some(Category::$variant), )* _ => None }
            }
        }
    };
}

categories! {
    OrphanTask => "orphan-task", High,
        "work started in the background that nobody joins, awaits or watches for errors";
    TaskSetLeak => "task-set-leak", Medium,
        "task handles collected in a container that only ever grows";
    GatherOrphans => "gather-orphans", Medium,
        "a gather/all whose first failure leaves the sibling operations running unsupervised";
    ShieldWithoutOwner => "shield-without-owner", High,
        "shielded work that is abandoned, with no owner, once the caller is cancelled";
    MissingAwait => "missing-await", High,
        "an async call whose result is dropped, used as a value or tested for truth";
    UnboundedFanout => "unbounded-fanout", High,
        "one concurrent operation per item of unbounded input, with no limit";
    UnboundedQueue => "unbounded-queue", Medium,
        "a queue or channel with no capacity bound";
    BlockingInAsync => "blocking-in-async", High,
        "a blocking call that stalls the event loop or async runtime thread";
    CpuInAsync => "cpu-in-async", High,
        "CPU-heavy work run on the event loop or async runtime thread";
    SyncOverAsync => "sync-over-async", Critical,
        "synchronously waiting, on the loop thread, for a result the loop itself must produce";
    MicrotaskStarvation => "microtask-starvation", Medium,
        "microtask loops that never let timers or I/O run";
    LockAcrossAwait => "lock-across-await", High,
        "a lock held while the task is suspended at an await";
    CriticalSectionIo => "critical-section-io", Medium,
        "I/O, logging or unknown callbacks run while a lock is held";
    LockOrder => "lock-order", Critical,
        "locks taken in inconsistent orders, or re-taken by their holder: a deadlock";
    WaitCycle => "wait-cycle", Critical,
        "a deadlock without locks: tasks or queues waiting on each other";
    SharedStateRace => "shared-state-race", High,
        "shared mutable state changed by concurrent tasks without synchronization";
    CheckThenAct => "check-then-act", High,
        "a check and the action it guards separated by a suspension point or a gap";
    Atomicity => "atomicity", High,
        "an atomic read followed by a dependent write that is not one atomic step";
    MemoryOrdering => "memory-ordering", High,
        "cross-thread publication without a synchronizing edge or with too weak an ordering";
    CondvarMisuse => "condvar-misuse", High,
        "condition-variable waits without a predicate loop, or notifications outside the lock";
    SemaphoreMisuse => "semaphore-misuse", Medium,
        "a lock or permit acquired without a release on every path";
    ChannelMisuse => "channel-misuse", High,
        "channel operations that can block forever, panic on close, or never finish";
    RaceLoserLeak => "race-loser-leak", Medium,
        "the losers of a race or select are never cancelled, or lose data when dropped";
    CancellationSwallowed => "cancellation-swallowed", High,
        "a cancellation caught and not propagated, leaving an unkillable task";
    AwaitInCleanup => "await-in-cleanup", Medium,
        "unbounded waiting in cleanup that runs during cancellation, or cleanup with a dead context";
    MissingTimeout => "missing-timeout", High,
        "a call to a network peer or external resource that can wait forever";
    ContextSevered => "context-severed", Medium,
        "a cancellation context or signal that is dropped instead of passed on";
    RetryStorm => "retry-storm", High,
        "retries with no backoff, no jitter, or no bound";
    ThunderingHerd => "thundering-herd", Medium,
        "many waiters woken or many clients retrying at once for one event";
    ResourceLeak => "resource-leak", Medium,
        "listeners, timers or workers that are created and never torn down";
    BackpressureIgnored => "backpressure-ignored", Medium,
        "a producer that ignores the consumer's signal to slow down";
    SignalHandlerWork => "signal-handler-work", Medium,
        "real work in a raw signal handler instead of the runtime's signal facility";
    GeneratorCleanup => "generator-cleanup", Low,
        "leaving an async generator early without closing it";
    SleepSynchronization => "sleep-synchronization", Medium,
        "sleeping to let something else finish instead of waiting for it";
    DoubleExecution => "double-execution", Medium,
        "at-least-once work with side effects and no idempotency";
}

/// A secondary location that explains a finding: the other acquisition of a
/// lock cycle, the blocking call at the end of a chain of helpers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// Index of the file in the scan (`None` = the finding's own file).
    pub file: Option<usize>,
    pub span: Span,
    pub message: String,
}

/// One problem found by one rule, in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub span: Span,
    /// What is wrong and which interleaving breaks it.
    pub message: String,
    /// The concrete fix in this language.
    pub fix: String,
    pub related: Vec<Related>,
}
