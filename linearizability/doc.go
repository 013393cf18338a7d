// Package linearizability checks the job histories of the model with
// porcupine (github.com/anishathalye/porcupine).
//
// Two porcupine models look at one replayed run (model.Replay):
//
//   - The counter as the jobs see it (CheckRun, CheckJobs). Each job is an
//     increment that returns the value it read. A history is linearizable
//     when some order of the jobs, consistent with their real-time
//     intervals [read step, write reply step], has every successful job
//     reading exactly the number of successful jobs before it, and the final
//     counter (a read appended after every job) equal to the number of
//     increments that took effect. A failed job (read or write rejected, or
//     crashed before writing) has no effect. A job whose outcome is unknown
//     (its client crashed with the write in flight) or pending (the trace
//     ended first) may or may not have taken effect: porcupine's
//     NondeterministicModel keeps both possibilities, and the operation gets
//     a finite return (the last step its write could still land), never
//     return-at-infinity, which would make the search blow up.
//
//   - The storage itself (CheckStorage): every read and write the storage
//     answered, with its token, checked against what the design's storage
//     mode promises (plain, max-token, max-write, cond-update, cas). The
//     model's storage always keeps its promise unless a bug is planted, so
//     this check is about the storage, not the lock. Beside it, each
//     storage operation is compared with the lock: an operation the storage
//     accepted from a client that did not hold the key, or refused from the
//     one that did, is a Disagreement. Demo 2's lost update is the storage
//     doing its job (plain storage accepts all) while the lock had already
//     passed to B.
//
// Times given to porcupine are the step numbers of the trace (StepRecord.Seq),
// not ticks: many steps share a tick, and ticks would make jobs that ran one
// after the other look concurrent.
//
// The HTML view (Options.HTML) is porcupine's visualisation with the run's
// story as annotations: a row per client (lock grants, pauses, slow jobs,
// crashes, releases, ✗ where a client acts without the key), a row for the
// key (who holds it, and how each holding ended: expiry, release, deletion
// by another client), and a row of ticks. The bytes are deterministic for a
// given history (the order of porcupine's partial linearizations, which
// porcupine takes from a map, is put in a canonical order).
//
// The caller's duties:
//
//  1. Pass a Run from model.Replay (CheckRun, CheckStorage) or jobs whose
//     CallSeq/ReturnSeq are positions in one trace (CheckJobs).
//  2. For a job with OutcomeUnknown, set ReturnSeq to the last step at which
//     its write could still take effect (0: the end of the history).
//  3. Set Options.Timeout for untrusted or large histories: a check that
//     runs out of time is Unknown, not Ok.
package linearizability
