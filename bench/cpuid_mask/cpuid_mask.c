/* Hides the AVX-512 family from the CPUID instruction of the process that loads this library, so that a peer
 * runtime with its own CPU dispatch (onnxruntime's MLAS) picks the kernels it would pick on an AVX2-only processor.
 * The benchmarks load it (bench/cpuid_mask/mask.py) before importing any runtime, to compare both runtimes at the
 * avx2 tier on a machine that has AVX-512.
 *
 * How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, 0; the CPU must report "cpuid_fault") makes every CPUID
 * executed by this thread, and by the threads it creates afterwards, raise SIGSEGV. The handler checks that the
 * faulting instruction is CPUID (0F A2), executes it with faulting briefly off, clears the AVX-512 bits of leaf 7,
 * writes the registers back and steps over the instruction. Any other SIGSEGV goes to the previous disposition.
 *
 * nxrt_cpuid_mask_install() returns 0 on success, -1 when the kernel or CPU refuses CPUID faulting (nothing is
 * changed then). Code that ran CPUID before the call (glibc's own dispatch, a runtime already imported) keeps what it
 * saw. x86-64 Linux only. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static struct sigaction previous_action;

static long set_cpuid_enabled(int enabled) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

/* Leaf 7, subleaf 0: EBX bits 16 (F), 17 (DQ), 21 (IFMA), 26 (PF), 27 (ER), 28 (CD), 30 (BW), 31 (VL); ECX bits 1
 * (VBMI), 6 (VBMI2), 11 (VNNI), 12 (BITALG), 14 (VPOPCNTDQ); EDX bits 2 (4VNNIW), 3 (4FMAPS), 8 (VP2INTERSECT), 23
 * (FP16). Subleaf 1: EAX bit 5 (AVX512_BF16). */
static void hide_avx512(uint32_t leaf, uint32_t subleaf, uint32_t regs[4]) {
  if (leaf != 7) return;
  if (subleaf == 0) {
    regs[1] &= ~((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | (1u << 30) | (1u << 31));
    regs[2] &= ~((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14));
    regs[3] &= ~((1u << 2) | (1u << 3) | (1u << 8) | (1u << 23));
  } else if (subleaf == 1) {
    regs[0] &= ~(1u << 5);
  }
}

static void on_segv(int signal_number, siginfo_t* info, void* context) {
  ucontext_t* uc = (ucontext_t*)context;
  greg_t* gregs = uc->uc_mcontext.gregs;
  const unsigned char* ip = (const unsigned char*)gregs[REG_RIP];
  if (info->si_code != SI_KERNEL || ip[0] != 0x0F || ip[1] != 0xA2) {
    /* Not a CPUID fault: hand it on (the default action re-raises after the handler returns). */
    if (previous_action.sa_flags & SA_SIGINFO) {
      previous_action.sa_sigaction(signal_number, info, context);
    } else if (previous_action.sa_handler != SIG_IGN && previous_action.sa_handler != SIG_DFL) {
      previous_action.sa_handler(signal_number);
    } else {
      signal(SIGSEGV, SIG_DFL);
    }
    return;
  }
  const uint32_t leaf = (uint32_t)gregs[REG_RAX], subleaf = (uint32_t)gregs[REG_RCX];
  uint32_t regs[4];
  set_cpuid_enabled(1);
  __asm__ volatile("cpuid" : "=a"(regs[0]), "=b"(regs[1]), "=c"(regs[2]), "=d"(regs[3]) : "a"(leaf), "c"(subleaf));
  set_cpuid_enabled(0);
  hide_avx512(leaf, subleaf, regs);
  gregs[REG_RAX] = regs[0];
  gregs[REG_RBX] = regs[1];
  gregs[REG_RCX] = regs[2];
  gregs[REG_RDX] = regs[3];
  gregs[REG_RIP] += 2;
}

/* 1 when CPUID, as this thread now sees it, reports AVX512F. */
int nxrt_cpuid_reports_avx512(void) {
  uint32_t a, b, c, d;
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7u), "c"(0u));
  return (int)((b >> 16) & 1u);
}

int nxrt_cpuid_mask_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_segv;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGSEGV, &action, &previous_action) != 0) return -1;
  if (set_cpuid_enabled(0) != 0) {
    sigaction(SIGSEGV, &previous_action, NULL);
    return -1;
  }
  return 0;
}
