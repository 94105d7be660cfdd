/*
 * call_tree.h — a group's call tree (SPEC §10.4): the representative
 * stacks of its retained reports merged from the outermost frame down, each
 * frame expanded into its inline chain (one node per identity, as grouping
 * names them: ingest/grouping.h), the same identity under the same parent
 * one node. A node counts the reports whose stack passes through it
 * ("count") and those whose innermost frame it is ("self"); in the tree of
 * an Android group, whose frames carry the durations of Matrix's stack
 * tree (SPEC §13), it also sums them ("ms": the time spent under it).
 *
 * Cost: PostgreSQL reads the matching rows of the group once, through the
 * reports' (app, key1, key2) index, each a skeleton of about 250 bytes,
 * and counts their distinct stacks (store/group_stacks.h); this process
 * parses each distinct stack once and walks it down the tree. Memory: the
 * stacks arrive ST_STACK_BATCH at a time, and the tree holds at most
 * SRV_TREE_MAX_NODES nodes (then a stack leaves the tree through its
 * parent's "(other)" node, where the counts stay exact), so neither grows
 * with the number of reports; a group of 100,000 reports with a few
 * hundred distinct stacks is one read of 100,000 small rows.
 *
 * Memory: *OUT_JSON is malloc'ed; the caller frees it.
 */
#ifndef STALLSCOPE_SERVER_CALL_TREE_H
#define STALLSCOPE_SERVER_CALL_TREE_H

#include <stdint.h>

#include "store/groups.h"

#define SRV_TREE_MAX_DEPTH    256 /* nodes below the root on one path */
#define SRV_TREE_MAX_CHILDREN 100 /* per node, "(other)" included */
#define SRV_TREE_MAX_NODES    65536

/*
 * The call tree of level-1 group KEY1 of APP_ID (of its level-2 group KEY2
 * only, unless NULL), over the reports F keeps, as {"reports":N,
 * "root":{"children":[node…]}} where a node is {"frame","function","file",
 * "line","image","count","self",["ms",]"children"} ("ms" when any frame
 * of the group had one); children by count
 * descending, then frame; past SRV_TREE_MAX_CHILDREN the smallest are
 * summed into one {"frame":"(other)"} node without children, and "as_of"
 * (AS_OF too, SRV_AS_OF_LEN bytes). Runs its own transaction, on the read
 * replica when there is one (server/service/folded_read.h). 1 with
 * *OUT_JSON, 0 when the app never had a report in the group, or a
 * negative st_status.
 */
int srv_call_tree(int64_t app_id, const char *key1, const char *key2, const st_group_filter *f,
		  char **out_json, char *as_of);

#endif
