// SPDX-License-Identifier: MIT
/*
 * /metrics: Prometheus text exposition (format 0.0.4). The capture's
 * counters come from the snapshot the capture thread refreshes after
 * its drains; the process's own CPU and memory are read at the scrape.
 * Memory (read by the capture thread, agent_metrics__memory(): a request
 * reads no file): RSS counts the ring buffer's pages twice (it is mapped
 * twice so records never wrap), so Pss and private bytes from
 * /proc/self/smaps_rollup are given beside it; private is what the agent
 * alone holds.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/agent.h"
#include "util.h"

static const unsigned http_code_of[] = { 200, 400, 401, 404, 405, 503 };
#define HTTP_CODES (sizeof(http_code_of) / sizeof(http_code_of[0]))

void agent__count_http(struct agent *a, unsigned code)
{
	size_t i;

	for (i = 0; i < HTTP_CODES && http_code_of[i] != code; i++)
		;
	pthread_mutex_lock(&a->mu);
	a->http_codes[i]++; /* HTTP_CODES: any other */
	pthread_mutex_unlock(&a->mu);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	head(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* Rss, Pss and Private_* of smaps_rollup, in bytes (0 when unreadable). */
void agent_metrics__memory(uint64_t *rss, uint64_t *pss, uint64_t *priv)
{
	char buf[4096], *line;
	ssize_t n;
	int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);

	*rss = *pss = *priv = 0;
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	for (line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long kb;

		if (sscanf(line, "Rss: %llu kB", &kb) == 1)
			*rss = kb * 1024;
		else if (sscanf(line, "Pss: %llu kB", &kb) == 1)
			*pss = kb * 1024;
		else if (sscanf(line, "Private_Clean: %llu kB", &kb) == 1 ||
			 sscanf(line, "Private_Dirty: %llu kB", &kb) == 1)
			*priv += kb * 1024;
	}
}

char *agent_metrics__text(struct agent *a, size_t *len)
{
	static const char *const src[4] = { "cpu", "futex", "offcpu", "wall" };
	struct agent_counters c;
	uint64_t codes[HTTP_CODES + 1], stacks, timeouts;
	struct rusage ru;
	char *buf = NULL;
	size_t nslices;
	FILE *f;

	pthread_mutex_lock(&a->mu);
	c = a->c;
	memcpy(codes, a->http_codes, sizeof(codes));
	timeouts = a->http_header_timeouts;
	pthread_mutex_unlock(&a->mu);
	nslices = agent_slices__count(a->slices, &stacks);
	getrusage(RUSAGE_SELF, &ru);
	if (!(f = open_memstream(&buf, len)))
		return NULL;

	head(f, "sfprof_events_total", "counter", "Records received from the kernel, by source.");
	for (int i = 0; i < 3; i++)
		fprintf(f, "sfprof_events_total{source=\"%s\"} %" PRIu64 "\n", src[i], c.events[i]);
	head(f, "sfprof_samples_total", "counter",
	     "Samples (cpu) or waits (futex, offcpu) in the agent's profiles, by source.");
	for (int i = 0; i < 4; i++)
		if (a->events & (1u << i))
			fprintf(f, "sfprof_samples_total{source=\"%s\"} %" PRIu64 "\n", src[i],
				c.samples[i]);
	head(f, "sfprof_lost_events_total", "counter", "Records lost, by reason.");
	{
		const struct {
			const char *r;
			uint64_t v;
		} lost[] = {
			{ "ringbuf", c.lost_ringbuf },	   { "stack_read", c.lost_stack_read },
			{ "busy", c.lost_busy },	   { "entry_map", c.lost_entry_map },
			{ "task", c.lost_task },	   { "target_map", c.lost_target_map },
			{ "offcpu_map", c.lost_offcpu_map }, { "sideband", c.lost_sideband },
			{ "python_busy", c.lost_py_busy },
		};
		for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
			fprintf(f, "sfprof_lost_events_total{reason=\"%s\"} %" PRIu64 "\n",
				lost[i].r, lost[i].v);
	}
	one(f, "sfprof_stack_reads_deferrable", "gauge",
	    "1 when a sample whose stack page is not resident has it read by its task before it "
	    "returns to user space; 0 where the kernel's verifier refuses that (such samples are "
	    "lost_events_total{reason=\"stack_read\"}).", c.stack_reads_deferrable);
	head(f, "sfprof_unwind_stops_total", "counter",
	     "Stacks unwound, by why the unwinder stopped (complete: at the entry frame).");
	for (int i = 0; i < UNWIND_STOP__NR; i++)
		fprintf(f, "sfprof_unwind_stops_total{reason=\"%s\"} %" PRIu64 "\n",
			unwind_stop__name(i), c.unwind_stop[i]);
	one(f, "sfprof_processes_tracked", "gauge",
	    "Processes whose address spaces are modelled now.", c.procs_tracked);
	one(f, "sfprof_processes_labelled", "gauge",
	    "Processes whose labels (name, exe, cgroup) are held now.", c.labelled_procs);
	one(f, "sfprof_label_table_full_total", "counter",
	    "Samples of a new process left unlabelled: the label table was full.",
	    c.label_table_full);
	one(f, "sfprof_binaries_tracked", "gauge", "Binaries (ELF files) loaded and not evicted.",
	    c.binaries_loaded - c.binaries_evicted);
	one(f, "sfprof_binaries_evicted_total", "counter",
	    "Binaries freed once no process mapped them.", c.binaries_evicted);
	one(f, "sfprof_binaries_shed_total", "counter",
	    "Mapped binaries whose symbols, lines and unwind tables were freed over the "
	    "memory budget (made again at their next use).", c.binaries_shed);
	one(f, "sfprof_binaries_shed_hot_total", "counter",
	    "Of the binaries shed, those used in the last second: the working set did not fit "
	    "the budget.", c.binaries_shed_hot);
	one(f, "sfprof_dwarf_trims_total", "counter",
	    "DWARF images whose pages mapped from the DWARF cache were given back over the "
	    "memory budget (faulted in again at their next lookups).", c.dwarf_trims);
	one(f, "sfprof_dwarf_closes_total", "counter",
	    "Binaries whose libdw handles (line tables, units) were freed over the memory budget, "
	    "their names kept (opened again for a new address).", c.dwarf_closes);
	one(f, "sfprof_slices", "gauge", "Profile slices held (the retention).", nslices);
	one(f, "sfprof_slice_stacks", "gauge", "Distinct stacks in the slices held.", stacks);
	one(f, "sfprof_merge_dropped_stacks_total", "counter",
	    "Stacks left out of an answered profile at its size bound.", c.merge_dropped);
	head(f, "sfprof_bpf_run_seconds_total", "counter",
	     "Time the kernel ran sfprof's BPF programs (0 unless sysctl "
	     "kernel.bpf_stats_enabled=1).");
	fprintf(f, "sfprof_bpf_run_seconds_total %.9f\n", (double)c.bpf_run_ns / 1e9);
	one(f, "sfprof_bpf_runs_total", "counter",
	    "Runs of sfprof's BPF programs (0 unless kernel.bpf_stats_enabled=1).", c.bpf_run_cnt);
	head(f, "process_cpu_seconds_total", "counter", "User and system CPU time of the agent.");
	fprintf(f, "process_cpu_seconds_total %.6f\n",
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	one(f, "process_resident_memory_bytes", "gauge",
	    "Resident memory (Rss; counts the ring buffer's double mapping twice).", c.rss);
	head(f, "sfprof_memory_bytes", "gauge",
	     "The agent's memory from smaps_rollup: pss (proportional), private (its own).");
	fprintf(f, "sfprof_memory_bytes{kind=\"pss\"} %" PRIu64 "\n", c.pss);
	fprintf(f, "sfprof_memory_bytes{kind=\"private\"} %" PRIu64 "\n", c.priv);
	head(f, "sfprof_http_requests_total", "counter", "HTTP requests answered, by status code.");
	for (size_t i = 0; i <= HTTP_CODES; i++) {
		if (i < HTTP_CODES)
			fprintf(f, "sfprof_http_requests_total{code=\"%u\"} %" PRIu64 "\n",
				http_code_of[i], codes[i]);
		else
			fprintf(f, "sfprof_http_requests_total{code=\"other\"} %" PRIu64 "\n",
				codes[i]);
	}
	one(f, "sfprof_http_header_timeouts_total", "counter",
	    "Connections closed for sending a request header too slowly.", timeouts);
	head(f, "sfprof_uptime_seconds", "gauge", "Seconds since the agent started.");
	fprintf(f, "sfprof_uptime_seconds %.3f\n", (double)(util__now_ns() - a->start_mono) / 1e9);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
