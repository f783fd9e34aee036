//! Every rule of unsnarl. Adding a rule = one file under the language's
//! folder and one line here.

use crate::rule::Rule;
use crate::{go, js, python, rust};

/// All rules, in id order.
pub fn all_rules() -> &'static [&'static dyn Rule] {
    RULES
}

/// The rule with this id (case-insensitive), else the first rule with this
/// name (several languages may share a name).
pub fn find_rule(key: &str) -> Option<&'static dyn Rule> {
    RULES
        .iter()
        .copied()
        .find(|r| r.meta().id.eq_ignore_ascii_case(key))
        .or_else(|| RULES.iter().copied().find(|r| r.meta().name == key))
}

/// Every rule with this name (one per language at most).
pub fn rules_named(name: &str) -> Vec<&'static dyn Rule> {
    RULES
        .iter()
        .copied()
        .filter(|r| r.meta().name.eq_ignore_ascii_case(name))
        .collect()
}

static RULES: &[&dyn Rule] = &[
    &go::unjoined_goroutine::UnjoinedGoroutine,
    &go::huge_channel_buffer::HugeChannelBuffer,
    &go::goroutine_channel_leak::GoroutineChannelLeak,
    &go::bad_channel_close::BadChannelClose,
    &go::range_unclosed_channel::RangeUnclosedChannel,
    &go::waitgroup_misuse::WaitgroupMisuse,
    &go::goroutine_per_item::GoroutinePerItem,
    &go::goroutine_per_send::GoroutinePerSend,
    &go::background_context::BackgroundContext,
    &go::lost_cancel::LostCancel,
    &go::context_less_call::ContextLessCall,
    &go::cleanup_with_request_context::CleanupWithRequestContext,
    &go::http_without_timeout::HttpWithoutTimeout,
    &go::goroutine_shared_write::GoroutineSharedWrite,
    &go::loop_variable_capture::LoopVariableCapture,
    &go::copied_lock::CopiedLock,
    &go::atomic_load_store::AtomicLoadStore,
    &go::plain_flag_polling::PlainFlagPolling,
    &go::lock_order_inversion::LockOrderInversion,
    &go::mutex_reacquired::MutexReacquired,
    &go::blocking_under_mutex::BlockingUnderMutex,
    &go::unlock_missing_on_path::UnlockMissingOnPath,
    &go::deferred_lock::DeferredLock,
    &go::cond_wait_without_loop::CondWaitWithoutLoop,
    &go::cond_signal_heterogeneous::CondSignalHeterogeneous,
    &go::retry_without_backoff::RetryWithoutBackoff,
    &go::time_tick_leak::TimeTickLeak,
    &go::timer_not_stopped::TimerNotStopped,
    &go::time_after_in_loop::TimeAfterInLoop,
    &go::signal_notify_unbuffered::SignalNotifyUnbuffered,
    &go::broadcast_for_one::BroadcastForOne,
    &go::poll_without_jitter::PollWithoutJitter,
    &go::sleep_to_synchronize::SleepToSynchronize,
    &go::split_invariant_update::SplitInvariantUpdate,
    &go::ack_before_work::AckBeforeWork,
    &go::retried_non_idempotent::RetriedNonIdempotent,
    &js::floating_promise::FloatingPromise,
    &js::blocking_call::BlockingCall,
    &js::lock_across_await::LockAcrossAwait,
    &js::async_promise_executor::AsyncPromiseExecutor,
    &js::async_callback_ignored::AsyncCallbackIgnored,
    &js::promise_in_condition::PromiseInCondition,
    &js::async_predicate::AsyncPredicate,
    &js::async_foreach::AsyncForEach,
    &js::return_in_try::ReturnInTry,
    &js::promise_as_value::PromiseAsValue,
    &js::cpu_heavy_call::CpuHeavyCall,
    &js::unbounded_promise_all::UnboundedPromiseAll,
    &js::loop_without_yield::LoopWithoutYield,
    &js::microtask_yield::MicrotaskYield,
    &js::recursive_microtask::RecursiveMicrotask,
    &js::acquire_without_finally::AcquireWithoutFinally,
    &js::check_then_await::CheckThenAwait,
    &js::exists_then_act::ExistsThenAct,
    &js::read_await_write::ReadAwaitWrite,
    &js::var_loop_capture::VarLoopCapture,
    &js::race_without_abort::RaceWithoutAbort,
    &js::missing_timeout::MissingTimeout,
    &js::signal_not_forwarded::SignalNotForwarded,
    &js::retry_without_backoff::RetryWithoutBackoff,
    &js::reconnect::ReconnectWithoutDelay,
    &js::fixed_interval::FixedIntervalNoJitter,
    &js::listener_leak::ListenerLeak,
    &js::interval_not_cleared::IntervalNotCleared,
    &js::promise_never_settles::PromiseNeverSettles,
    &js::write_without_drain::WriteWithoutDrain,
    &js::array_as_queue::ArrayAsQueue,
    &js::sleep_in_test::SleepInTest,
    &js::ack_before_work::AckBeforeWork,
    &python::discarded_task::DiscardedTask,
    &python::blocking_call::BlockingCall,
    &python::unbounded_queue::UnboundedQueue,
    &python::lock_across_await::LockAcrossAwait,
    &python::sync_over_async::SyncOverAsync,
    &python::cancellation_swallowed::CancellationSwallowed,
    &python::cpu_heavy_call::CpuHeavyCall,
    &python::task_set_leak::TaskSetLeak,
    &python::gather_orphans::GatherOrphans,
    &python::shield_without_owner::ShieldWithoutOwner,
    &python::missing_await::MissingAwait,
    &python::unbounded_fanout::UnboundedFanout,
    &python::critical_section_io::CriticalSectionIo,
    &python::lock_order::LockOrder,
    &python::lost_update::LostUpdate,
    &python::thread_shared_mutation::ThreadSharedMutation,
    &python::late_binding_closure::LateBindingClosure,
    &python::check_then_await::CheckThenAwait,
    &python::path_toctou::PathToctou,
    &python::condvar_wait_if::CondvarWaitIf,
    &python::notify_without_lock::NotifyWithoutLock,
    &python::acquire_without_release::AcquireWithoutRelease,
    &python::wait_first_completed::WaitFirstCompleted,
    &python::await_in_cleanup::AwaitInCleanup,
    &python::request_without_timeout::RequestWithoutTimeout,
    &python::network_await_without_deadline::NetworkAwaitWithoutDeadline,
    &python::retry_without_backoff::RetryWithoutBackoff,
    &python::tenacity_unbounded::TenacityUnbounded,
    &python::notify_all_for_one::NotifyAllForOne,
    &python::periodic_without_jitter::PeriodicWithoutJitter,
    &python::write_without_drain::WriteWithoutDrain,
    &python::amqp_no_prefetch::AmqpNoPrefetch,
    &python::signal_in_asyncio::SignalInAsyncio,
    &python::signal_handler_work::SignalHandlerWork,
    &python::async_generator_not_closed::AsyncGeneratorNotClosed,
    &python::sleep_synchronization::SleepSynchronization,
    &python::uncancel_in_app_code::UncancelInAppCode,
    &python::sync_bridge_from_async::SyncBridgeFromAsync,
    &python::ack_before_work::AckBeforeWork,
    &python::retried_non_idempotent::RetriedNonIdempotent,
    &python::join_before_drain::JoinBeforeDrain,
    &rust::detached_spawn::DetachedSpawn,
    &rust::blocking_call::BlockingCall,
    &rust::unbounded_channel::UnboundedChannel,
    &rust::guard_across_await::GuardAcrossAwait,
    &rust::block_on_in_async::BlockOnInAsync,
    &rust::cpu_heavy_on_runtime::CpuHeavyOnRuntime,
    &rust::spawn_per_item::SpawnPerItem,
    &rust::select_not_cancel_safe::SelectNotCancelSafe,
    &rust::recv_loop_live_sender::RecvLoopLiveSender,
    &rust::self_feeding_channel::SelfFeedingChannel,
    &rust::lock_order_cycle::LockOrderCycle,
    &rust::relock_while_held::RelockWhileHeld,
    &rust::async_guard_across_io::AsyncGuardAcrossIo,
    &rust::relaxed_publish_flag::RelaxedPublishFlag,
    &rust::double_checked_init::DoubleCheckedInit,
    &rust::static_mut_from_thread::StaticMutFromThread,
    &rust::atomic_load_store_race::AtomicLoadStoreRace,
    &rust::condvar_wait_outside_loop::CondvarWaitOutsideLoop,
    &rust::condvar_notify_one_mixed::CondvarNotifyOneMixed,
    &rust::reqwest_without_timeout::ReqwestWithoutTimeout,
    &rust::connect_without_timeout::ConnectWithoutTimeout,
    &rust::retry_loop_without_backoff::RetryLoopWithoutBackoff,
    &rust::endless_spawned_loop::EndlessSpawnedLoop,
    &rust::forgotten_guard::ForgottenGuard,
    &rust::notify_all_for_one::NotifyAllForOne,
    &rust::reconnect_without_jitter::ReconnectWithoutJitter,
    &rust::sleep_before_assert::SleepBeforeAssert,
    &rust::ack_before_work::AckBeforeWork,
    &rust::retried_non_idempotent::RetriedNonIdempotent,
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_and_names_are_unique_and_well_formed() {
        let mut ids = HashSet::new();
        // A name may be shared across languages (the same concern), never
        // within one.
        let mut names = HashSet::new();
        for r in all_rules() {
            let m = r.meta();
            assert!(ids.insert(m.id), "duplicate id {}", m.id);
            let mut families: Vec<&str> = m
                .languages
                .iter()
                .map(|l| if l.is_js_family() { "js" } else { l.slug() })
                .collect();
            families.dedup();
            for family in families {
                assert!(
                    names.insert((family, m.name)),
                    "duplicate name {} in {family}",
                    m.name
                );
            }
            assert!(
                m.name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                "{}: name must be kebab-case",
                m.id
            );
            for section in ["## Why", "## Example", "## Fix"] {
                assert!(m.docs.contains(section), "{}: docs lack {section}", m.id);
            }
            assert!(!m.languages.is_empty(), "{}: no language", m.id);
        }
    }

    #[test]
    fn ids_are_sorted() {
        let ids: Vec<_> = all_rules().iter().map(|r| r.meta().id).collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }
}
