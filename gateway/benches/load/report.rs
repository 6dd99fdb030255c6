//! What a run measured and how it is printed: latency percentiles, throughput, the CPU this
//! process, the gateway's threads and the rest of the (shared) machine used meanwhile, the
//! gateway's allocations, and the load average.

use std::collections::BTreeMap;
use std::time::Duration;

/// The prefix of the messages of errors during the warm-up.
pub(crate) const WARM_UP_PREFIX: &str = "(warm-up) ";

/// Clock ticks per second of `/proc` CPU counters (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU counters at one moment: this process's and the whole machine's busy time, in ticks.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CpuSample {
    process_ticks: u64,
    machine_busy_ticks: u64,
}

impl CpuSample {
    /// Reads `/proc/self/stat` and `/proc/stat` (zeros where they cannot be read).
    pub(crate) fn now() -> CpuSample {
        let process_ticks = stat_ticks("/proc/self/stat");
        let machine_busy_ticks = std::fs::read_to_string("/proc/stat")
            .ok()
            .and_then(|stat| {
                let line = stat.lines().next()?;
                let values: Vec<u64> = line
                    .split_whitespace()
                    .skip(1)
                    .filter_map(|value| value.parse().ok())
                    .collect();
                // user nice system idle iowait irq softirq steal …: busy is all but idle and
                // iowait (guest time is already inside user).
                let total: u64 = values.iter().take(8).sum();
                Some(total - values.get(3)? - values.get(4)?)
            })
            .unwrap_or(0);
        CpuSample {
            process_ticks,
            machine_busy_ticks,
        }
    }
}

/// The names the gateway's threads carry: its runtime's workers and blocking threads
/// ([`GATEWAY_THREAD_NAME`]), and the audit writer thread of builds that have one.
pub(crate) const GATEWAY_THREAD_NAME: &str = "tg-gateway";
const AUDIT_THREAD_NAME: &str = "toolgate-audit";

/// The gateway's own counters at one moment: CPU ticks of its threads (utime + stime of each
/// `/proc/self/task/TID/stat` whose name is the gateway's) and allocations counted.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GatewaySample {
    ticks: u64,
    /// `None` for another gateway's process, whose allocations this process cannot count.
    allocations: Option<u64>,
}

/// Whose CPU a run samples besides this process's: the gateway's threads (in this process), or
/// another gateway's process (`--compare`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sampled {
    GatewayThreads,
    Process(u32),
}

impl Sampled {
    pub(crate) fn now(self) -> GatewaySample {
        match self {
            Sampled::GatewayThreads => GatewaySample::now(),
            Sampled::Process(pid) => GatewaySample::of_process(pid),
        }
    }
}

impl GatewaySample {
    /// Reads the counters now. A gateway thread that ended since the last sample would take its
    /// CPU time with it: the gateway runtime keeps its threads for the whole run.
    pub(crate) fn now() -> GatewaySample {
        let mut ticks = 0;
        if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
            for task in tasks.flatten() {
                let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
                    continue;
                };
                let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
                    continue;
                };
                let name = &stat[open + 1..close];
                if !(name.starts_with(GATEWAY_THREAD_NAME) || name == AUDIT_THREAD_NAME) {
                    continue;
                }
                ticks += utime_and_stime(&stat).unwrap_or(0);
            }
        }
        GatewaySample {
            ticks,
            allocations: Some(crate::alloc::counted()),
        }
    }

    /// The CPU ticks (utime + stime, all its threads) of process `pid`, from
    /// `/proc/PID/stat`: another gateway's, run as a child. Zero when it cannot be read (the
    /// process has ended).
    pub(crate) fn of_process(pid: u32) -> GatewaySample {
        GatewaySample {
            ticks: stat_ticks(&format!("/proc/{pid}/stat")),
            allocations: None,
        }
    }
}

/// utime + stime of the `stat` file at `path` (a process's or a thread's), 0 when it cannot be
/// read.
fn stat_ticks(path: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|stat| utime_and_stime(&stat))
        .unwrap_or(0)
}

/// utime + stime from the text of a `/proc/…/stat` file.
fn utime_and_stime(stat: &str) -> Option<u64> {
    // Fields after the parenthesized command name (which may hold spaces and parentheses);
    // utime and stime are fields 14 and 15 of the whole line, so 12 and 13 after it.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The 1-minute load average, from `/proc/loadavg`.
pub(crate) fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The result of one scenario at one concurrency.
#[derive(Debug, Clone)]
pub(crate) struct Measurement {
    pub(crate) scenario: &'static str,
    pub(crate) audit: &'static str,
    pub(crate) clients: usize,
    /// Every measured exchange's latency, sorted.
    pub(crate) latencies: Vec<Duration>,
    pub(crate) errors: BTreeMap<String, u64>,
    pub(crate) elapsed: Duration,
    pub(crate) cpu_before: CpuSample,
    pub(crate) cpu_after: CpuSample,
    /// The gateway's counters before and after, for the scenarios through the gateway.
    pub(crate) gateway: Option<(GatewaySample, GatewaySample)>,
    pub(crate) load_average: f64,
}

impl Measurement {
    /// Errors in total, warm-up included.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Measured exchanges (after the warm-up), failed ones included.
    pub(crate) fn calls(&self) -> u64 {
        let measured_errors: u64 = self
            .errors
            .iter()
            .filter(|(message, _)| !message.starts_with(WARM_UP_PREFIX))
            .map(|(_, count)| count)
            .sum();
        self.latencies.len() as u64 + measured_errors
    }

    /// Successful exchanges per second.
    pub(crate) fn throughput(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The `fraction` percentile (nearest rank) of the successful exchanges.
    pub(crate) fn percentile(&self, fraction: f64) -> Option<Duration> {
        if self.latencies.is_empty() {
            return None;
        }
        let rank = (fraction * self.latencies.len() as f64).ceil() as usize;
        self.latencies
            .get(rank.clamp(1, self.latencies.len()) - 1)
            .copied()
    }

    /// CPU time of this process per successful exchange, in µs (load generator included).
    pub(crate) fn cpu_per_call_us(&self) -> f64 {
        let ticks = self
            .cpu_after
            .process_ticks
            .saturating_sub(self.cpu_before.process_ticks);
        ticks as f64 / TICKS_PER_SECOND * 1e6 / (self.latencies.len().max(1) as f64)
    }

    /// CPU time of the gateway's threads per successful exchange, in µs.
    pub(crate) fn gateway_cpu_per_call_us(&self) -> Option<f64> {
        let (before, after) = self.gateway?;
        let ticks = after.ticks.saturating_sub(before.ticks);
        Some(ticks as f64 / TICKS_PER_SECOND * 1e6 / (self.latencies.len().max(1) as f64))
    }

    /// Heap allocations on the gateway's threads per successful exchange.
    pub(crate) fn gateway_allocations_per_call(&self) -> Option<f64> {
        let (before, after) = self.gateway?;
        let allocations = after.allocations?.saturating_sub(before.allocations?);
        Some(allocations as f64 / (self.latencies.len().max(1) as f64))
    }

    /// CPU used by everything else on the machine meanwhile, in cores.
    pub(crate) fn others_cores(&self) -> f64 {
        let machine = self
            .cpu_after
            .machine_busy_ticks
            .saturating_sub(self.cpu_before.machine_busy_ticks);
        let process = self
            .cpu_after
            .process_ticks
            .saturating_sub(self.cpu_before.process_ticks);
        machine.saturating_sub(process) as f64
            / TICKS_PER_SECOND
            / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// CPU used by this process meanwhile, in cores.
    pub(crate) fn process_cores(&self) -> f64 {
        let process = self
            .cpu_after
            .process_ticks
            .saturating_sub(self.cpu_before.process_ticks);
        process as f64 / TICKS_PER_SECOND / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Microseconds with one decimal.
pub(crate) fn micros(duration: Option<Duration>) -> String {
    match duration {
        Some(duration) => format!("{:.1}", duration.as_secs_f64() * 1e6),
        None => "n/a".to_owned(),
    }
}

/// The signed difference `a − b` in µs.
pub(crate) fn difference_us(a: Option<Duration>, b: Option<Duration>) -> Option<f64> {
    Some((a?.as_secs_f64() - b?.as_secs_f64()) * 1e6)
}

/// The table header, Markdown.
pub(crate) const TABLE_HEADER: &str = "| scenario | audit log | clients | calls | errors | calls/s | p50 µs | p90 µs | p99 µs | max µs | overhead p50 µs | CPU µs/call | gateway CPU µs/call | gateway allocs/call | this process (cores) | others (cores) | load avg 1m |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";

/// One table row; `direct_p50` is the baseline at the same concurrency, when measured.
pub(crate) fn table_row(measurement: &Measurement, direct_p50: Option<Duration>) -> String {
    let overhead = if measurement.audit == "-" {
        "–".to_owned()
    } else {
        match difference_us(measurement.percentile(0.5), direct_p50) {
            Some(overhead) => format!("{overhead:.1}"),
            None => "n/a".to_owned(),
        }
    };
    format!(
        "| {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {:.2} | {:.2} | {:.2} |",
        measurement.scenario,
        measurement.audit,
        measurement.clients,
        measurement.calls(),
        measurement.error_count(),
        measurement.throughput(),
        micros(measurement.percentile(0.5)),
        micros(measurement.percentile(0.9)),
        micros(measurement.percentile(0.99)),
        micros(measurement.latencies.last().copied()),
        overhead,
        measurement.cpu_per_call_us(),
        measurement
            .gateway_cpu_per_call_us()
            .map_or_else(|| "–".to_owned(), |cpu| format!("{cpu:.1}")),
        measurement
            .gateway_allocations_per_call()
            .map_or_else(|| "–".to_owned(), |count| format!("{count:.1}")),
        measurement.process_cores(),
        measurement.others_cores(),
        measurement.load_average,
    )
}
