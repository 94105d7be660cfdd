/*
 * fuzz_target.h — what every libFuzzer target declares: the entry point it
 * defines and, for targets with a custom mutator, libFuzzer's own mutator
 * and the hook. Included by each fuzz/fuzz_*.c.
 */
#ifndef STALLSCOPE_FUZZ_TARGET_H
#define STALLSCOPE_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif
