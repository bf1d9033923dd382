//! The seccomp filter of the bubblewrap sandbox, as data: which system calls generated code
//! may not make, compiled to classic BPF by the `seccompiler` crate and handed to bubblewrap
//! (`--add-seccomp-fd FD`, once for each program), which loads it just before the sandbox's command.
//!
//! A deny list, not an allow list: the sandbox already runs without capabilities, as an
//! unprivileged host user, without /proc and without network, so the filter only has to close
//! the kernel interfaces that stay reachable without privilege and that tests never need:
//! namespaces (a nested user namespace gives back capabilities over new namespaces), mounts,
//! keyrings, ptrace and cross-process memory (and another process's descriptors), BPF and
//! perf, io_uring, userfaultfd, SysV shared memory, vsock sockets, terminal injection. The Docker backend keeps Docker's default profile, which is an allow list.
//!
//! `clone3` is answered with ENOSYS rather than EPERM: its flags are in memory a filter cannot
//! read, and ENOSYS makes the C library fall back to `clone`, whose flags the filter checks.
//! One seccompiler filter has one action on a match, so that answer is a second program.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Every `CLONE_NEW*` flag: a `clone` or `unshare` that asks for any new namespace is refused.
const NEW_NAMESPACE_FLAGS: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u64;

/// Socket families that leave the network namespace: vsock talks to the hypervisor's host
/// (and its other guests) whatever namespace the socket was made in.
const OUTSIDE_THE_NETWORK_NAMESPACE: [u64; 1] = [libc::AF_VSOCK as u64];

/// ioctls on a terminal that push input into it or reach the console. (The request type is
/// `c_ulong` or `c_int` by platform, hence the casts.)
#[allow(clippy::unnecessary_cast)]
const TERMINAL_INJECTION: [u64; 2] = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// What is refused, and how: a whole call, or a call whose argument has a property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Denied {
    /// Every use of the call.
    Call(&'static str, i64),
    /// The call when argument `arg` has any of `mask`'s bits set.
    AnyFlag(&'static str, i64, u8, u64),
    /// The call when argument `arg` equals one of the values.
    Value(&'static str, i64, u8, &'static [u64]),
}

/// The calls refused with EPERM (pure: the test reads the whole table).
pub(crate) fn denied() -> Vec<Denied> {
    use Denied::{AnyFlag, Call, Value};
    vec![
        // Namespaces: no nested user namespace, no other new namespace, no joining one.
        Call("unshare", libc::SYS_unshare),
        Call("setns", libc::SYS_setns),
        AnyFlag("clone", libc::SYS_clone, 0, NEW_NAMESPACE_FLAGS),
        // Mounts, old and new API.
        Call("mount", libc::SYS_mount),
        Call("umount2", libc::SYS_umount2),
        Call("pivot_root", libc::SYS_pivot_root),
        Call("chroot", libc::SYS_chroot),
        Call("open_tree", libc::SYS_open_tree),
        Call("move_mount", libc::SYS_move_mount),
        Call("fsopen", libc::SYS_fsopen),
        Call("fsconfig", libc::SYS_fsconfig),
        Call("fsmount", libc::SYS_fsmount),
        Call("fspick", libc::SYS_fspick),
        Call("mount_setattr", libc::SYS_mount_setattr),
        // Keyrings are shared with the host user.
        Call("keyctl", libc::SYS_keyctl),
        Call("add_key", libc::SYS_add_key),
        Call("request_key", libc::SYS_request_key),
        // Other processes' memory and tracing.
        Call("ptrace", libc::SYS_ptrace),
        Call("process_vm_readv", libc::SYS_process_vm_readv),
        Call("process_vm_writev", libc::SYS_process_vm_writev),
        Call("kcmp", libc::SYS_kcmp),
        // A test is the runner's child with its uid: with these it would take the runner's
        // pipe to zerorepo (and write without end into it), or advise its memory.
        Call("pidfd_getfd", libc::SYS_pidfd_getfd),
        Call("process_madvise", libc::SYS_process_madvise),
        // Kernel attack surface no test needs.
        Call("bpf", libc::SYS_bpf),
        Call("perf_event_open", libc::SYS_perf_event_open),
        Call("userfaultfd", libc::SYS_userfaultfd),
        Call("io_uring_setup", libc::SYS_io_uring_setup),
        Call("io_uring_enter", libc::SYS_io_uring_enter),
        Call("io_uring_register", libc::SYS_io_uring_register),
        Call("fanotify_init", libc::SYS_fanotify_init),
        // SysV shared memory and queues outlive the process that made them and are in no
        // memory limit of a sandbox started without root; tests use POSIX ones (/dev/shm).
        Call("shmget", libc::SYS_shmget),
        Call("msgget", libc::SYS_msgget),
        // No network means none: vsock is not confined by the network namespace.
        Value(
            "socket",
            libc::SYS_socket,
            0,
            &OUTSIDE_THE_NETWORK_NAMESPACE,
        ),
        Call("open_by_handle_at", libc::SYS_open_by_handle_at),
        Call("name_to_handle_at", libc::SYS_name_to_handle_at),
        // The machine itself: modules, kexec, reboot, swap, clocks, accounting, logs.
        Call("init_module", libc::SYS_init_module),
        Call("finit_module", libc::SYS_finit_module),
        Call("delete_module", libc::SYS_delete_module),
        Call("kexec_load", libc::SYS_kexec_load),
        Call("kexec_file_load", libc::SYS_kexec_file_load),
        Call("reboot", libc::SYS_reboot),
        Call("swapon", libc::SYS_swapon),
        Call("swapoff", libc::SYS_swapoff),
        Call("settimeofday", libc::SYS_settimeofday),
        Call("clock_settime", libc::SYS_clock_settime),
        Call("clock_adjtime", libc::SYS_clock_adjtime),
        Call("adjtimex", libc::SYS_adjtimex),
        Call("acct", libc::SYS_acct),
        Call("quotactl", libc::SYS_quotactl),
        Call("syslog", libc::SYS_syslog),
        Call("vhangup", libc::SYS_vhangup),
        // Typing into the terminal zerorepo was started from.
        Value("ioctl", libc::SYS_ioctl, 1, &TERMINAL_INJECTION),
    ]
}

/// The two programs bubblewrap loads: the EPERM deny list, and ENOSYS for `clone3`. `None` on
/// an architecture seccompiler does not know (the sandbox then runs without a filter, and a
/// warning says so).
pub(crate) fn programs() -> Result<Option<[Vec<u8>; 2]>, seccompiler::BackendError> {
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(None);
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for denial in denied() {
        let (number, conditions) = match denial {
            Denied::Call(_, number) => (number, Vec::new()),
            Denied::AnyFlag(_, number, arg, mask) => (number, any_bit(arg, mask)?),
            Denied::Value(_, number, arg, values) => {
                let each: Result<Vec<_>, _> = values
                    .iter()
                    .map(|value| {
                        SeccompCondition::new(
                            arg,
                            SeccompCmpArgLen::Dword,
                            SeccompCmpOp::Eq,
                            *value,
                        )
                        .map(|c| vec![c])
                    })
                    .collect();
                (number, each?)
            }
        };
        let chain = conditions
            .into_iter()
            .map(SeccompRule::new)
            .collect::<Result<Vec<_>, _>>()?;
        rules.entry(number).or_default().extend(chain);
    }
    let deny = compile(rules, libc::EPERM, arch)?;
    let clone3 = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    Ok(Some([deny, clone3]))
}

/// `arg & mask != 0` as rules (alternatives): seccompiler compares masked bits for equality
/// only, so "any of these bits" is one rule per bit.
fn any_bit(arg: u8, mask: u64) -> Result<Vec<Vec<SeccompCondition>>, seccompiler::BackendError> {
    (0..64)
        .map(|shift| 1u64 << shift)
        .filter(|bit| mask & bit != 0)
        .map(|bit| {
            SeccompCondition::new(
                arg,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(bit),
                bit,
            )
            .map(|c| vec![c])
        })
        .collect()
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<Vec<u8>, seccompiler::BackendError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    Ok(to_bytes(&program))
}

/// The program as the kernel's `struct sock_filter` array, which is what bubblewrap reads.
fn to_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for instruction in program {
        bytes.extend_from_slice(&instruction.code.to_ne_bytes());
        bytes.push(instruction.jt);
        bytes.push(instruction.jf);
        bytes.extend_from_slice(&instruction.k.to_ne_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deny_list_names_each_call_once_and_compiles_on_this_architecture() {
        let names: Vec<&str> = denied()
            .iter()
            .map(|d| match d {
                Denied::Call(name, _) | Denied::AnyFlag(name, ..) | Denied::Value(name, ..) => {
                    *name
                }
            })
            .collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        for needed in [
            "unshare",
            "clone",
            "mount",
            "keyctl",
            "ptrace",
            "bpf",
            "io_uring_setup",
            "pidfd_getfd",
            "socket",
        ] {
            assert!(names.contains(&needed), "{needed}");
        }
        if TargetArch::try_from(std::env::consts::ARCH).is_ok() {
            let [deny, clone3] = programs().unwrap().unwrap();
            // Whole `struct sock_filter`s, and more than one per denied call.
            assert_eq!(deny.len() % 8, 0);
            assert!(deny.len() / 8 > names.len());
            assert!(!clone3.is_empty() && clone3.len() % 8 == 0);
        }
    }

    #[test]
    fn any_namespace_flag_is_one_rule_per_bit() {
        let rules = any_bit(0, 0b1010).unwrap();
        assert_eq!(rules.len(), 2);
    }
}
