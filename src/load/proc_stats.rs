//! Memory and CPU of this process, its children and threads, and the machine, from `/proc`.

/// A one-line description of this machine: cores, memory, kernel.
pub fn machine_description() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mem_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| std::env::consts::OS.to_string());
    format!(
        "{cores} cores, {:.0} GiB, {} {kernel}",
        mem_kib as f64 / (1024.0 * 1024.0),
        std::env::consts::ARCH
    )
}

/// Peak resident memory of this process (VmHWM), 0 where /proc is absent.
pub fn peak_rss_bytes() -> u64 {
    status_kib("self", "VmHWM:") * 1024
}

/// Starts this process's peak resident memory (VmHWM) again from its
/// current size, so a later [`peak_rss_bytes`] is the peak since then: the
/// load's build of thousands of objects peaks higher than the controller
/// does. Linux's `clear_refs` value 5 resets only the peak; where that
/// cannot be written, the peak stays the process's whole life's, and this
/// says so by returning false.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Current resident memory of this process (VmRSS), 0 where /proc is absent.
pub fn current_rss_bytes() -> u64 {
    status_kib("self", "VmRSS:") * 1024
}

/// Current resident memory of process `pid` (VmRSS), 0 when unreadable.
pub fn rss_bytes_of(pid: u32) -> u64 {
    status_kib(&pid.to_string(), "VmRSS:") * 1024
}

/// Peak resident memory of process `pid` (a child, e.g. the simulated
/// cluster), 0 when it cannot be read (gone, or no /proc).
pub fn peak_rss_bytes_of(pid: u32) -> u64 {
    status_kib(&pid.to_string(), "VmHWM:") * 1024
}

fn status_kib(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(0)
}

/// CPU time (user + system) this process has used, 0 where /proc is absent.
pub fn cpu_seconds() -> f64 {
    proc_cpu_seconds("self")
}

/// CPU time (user + system) process `pid` has used, 0 when unreadable.
pub fn cpu_seconds_of(pid: u32) -> f64 {
    proc_cpu_seconds(&pid.to_string())
}

/// CPU time (user + system) of one thread, given as its `/proc` task path
/// relative to `/proc` (`PID/task/TID`); 0 when unreadable.
pub fn thread_cpu_seconds(task: &str) -> f64 {
    proc_cpu_seconds(task)
}

fn proc_cpu_seconds(pid: &str) -> f64 {
    // Fields 14 and 15 of /proc/PID/stat, in clock ticks; the second field
    // (the command name) may hold spaces, so count from its closing paren.
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return 0.0;
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // After the paren: state is index 0, so utime (field 14) is index 11.
    const CLOCK_TICKS_PER_SECOND: f64 = 100.0;
    (ticks(11) + ticks(12)) / CLOCK_TICKS_PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_starts_again_from_the_reset() {
        const BIG: usize = 256 * 1024 * 1024;
        let big = std::hint::black_box(vec![1u8; BIG]);
        let with_big = peak_rss_bytes();
        drop(big);
        if !reset_peak_rss() {
            return; // not Linux: the peak is the process's whole life's
        }
        assert!(with_big >= BIG as u64, "{with_big}");
        let after = peak_rss_bytes();
        assert!(after + (BIG as u64) / 2 < with_big, "{after} vs {with_big}");
    }

    #[test]
    fn this_process_reports_memory_and_cpu() {
        assert!(peak_rss_bytes() > 0);
        assert!(current_rss_bytes() > 0);
        assert!(current_rss_bytes() <= peak_rss_bytes());
        assert!(cpu_seconds() >= 0.0);
        let task = std::fs::read_link("/proc/thread-self").unwrap();
        let task = task.to_string_lossy();
        assert!(task.contains("/task/"), "{task}");
        assert!(thread_cpu_seconds(&task) <= cpu_seconds());
        assert!(machine_description().contains("cores"));
    }
}
