/*
 * libbloom (Jyri J. Virkki, BSD-2-Clause; Debian's libbloom-dev) timed on the same keys as the
 * JavaScript libraries: the C anchor of `npm run bench`. Compiled by bench/libbloom.ts with
 * `cc -O2 ... -lbloom`; skipped with a message where the library or a compiler is missing.
 *
 * Usage: libbloom-bench <keys file> <fpp> <rounds>
 * The keys file (written by bench/libbloom.ts): u32 n, then the present keys and the absent keys,
 * each set as n + 1 u32 offsets followed by the packed bytes (the keys' UTF-8), little-endian.
 * Prints one JSON line: the best ops/s of the rounds for add, has(present) and has(absent), the
 * false positives, the bits and hashes. Before any timing, every present key must be found.
 */
#include <bloom.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct keyset {
  uint32_t *offsets;
  unsigned char *bytes;
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *data = malloc(*size);
  if (!data || fread(data, 1, *size, f) != *size) {
    fclose(f);
    return NULL;
  }
  fclose(f);
  return data;
}

static size_t parse_set(unsigned char *at, uint32_t n, struct keyset *set) {
  set->offsets = (uint32_t *)at;
  set->bytes = at + 4 * ((size_t)n + 1);
  return 4 * ((size_t)n + 1) + set->offsets[n];
}

static uint32_t count_hits(struct bloom *b, const struct keyset *s, uint32_t n) {
  uint32_t hits = 0;
  for (uint32_t i = 0; i < n; i++) {
    hits += bloom_check(b, s->bytes + s->offsets[i], (int)(s->offsets[i + 1] - s->offsets[i]));
  }
  return hits;
}

static void add_all(struct bloom *b, const struct keyset *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    bloom_add(b, s->bytes + s->offsets[i], (int)(s->offsets[i + 1] - s->offsets[i]));
  }
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <keys file> <fpp> <rounds>\n", argv[0]);
    return 2;
  }
  size_t size;
  unsigned char *data = read_file(argv[1], &size);
  if (!data) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  double fpp = atof(argv[2]);
  int rounds = atoi(argv[3]);
  uint32_t n;
  memcpy(&n, data, 4);
  struct keyset present, absent;
  size_t used = parse_set(data + 4, n, &present);
  /* Offsets are u32: the present set's size keeps the absent set 4-byte aligned (padded by the writer). */
  parse_set(data + 4 + ((used + 3) & ~(size_t)3), n, &absent);

  struct bloom b;
  if (bloom_init(&b, n, fpp) != 0) {
    fprintf(stderr, "bloom_init2 failed\n");
    return 1;
  }
  add_all(&b, &present, n);
  if (count_hits(&b, &present, n) != n) {
    fprintf(stderr, "libbloom: false negatives\n");
    return 1;
  }
  uint32_t fp = count_hits(&b, &absent, n);
  long bits = b.bits;
  int hashes = b.hashes;
  bloom_free(&b);

  double best_add = 0, best_present = 0, best_absent = 0;
  for (int r = 0; r < rounds; r++) {
    bloom_init(&b, n, fpp);
    double t0 = now();
    add_all(&b, &present, n);
    double t1 = now();
    uint32_t hits = count_hits(&b, &present, n);
    double t2 = now();
    uint32_t fp2 = count_hits(&b, &absent, n);
    double t3 = now();
    bloom_free(&b);
    if (hits != n || fp2 != fp) {
      fprintf(stderr, "libbloom: round %d answered differently\n", r);
      return 1;
    }
    if (n / (t1 - t0) > best_add) best_add = n / (t1 - t0);
    if (n / (t2 - t1) > best_present) best_present = n / (t2 - t1);
    if (n / (t3 - t2) > best_absent) best_absent = n / (t3 - t2);
  }
  printf("{\"add\":%.0f,\"hasPresent\":%.0f,\"hasAbsent\":%.0f,\"falsePositives\":%u,\"bits\":%ld,\"hashes\":%d}\n",
         best_add, best_present, best_absent, fp, bits, hashes);
  free(data);
  return 0;
}
