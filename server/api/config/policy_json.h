/*
 * policy_json.h — an app's policy (store/reports.h st_app_config) as the
 * config endpoints show it.
 */
#ifndef STALLSCOPE_SERVER_POLICY_JSON_H
#define STALLSCOPE_SERVER_POLICY_JSON_H

#include <jansson.h>

#include "store/reports.h"

/* {"sample_rate","daily_quota","retention_days","grouping_rules"}; a new
 * reference, NULL when out of memory. */
json_t *srv_config_json(const st_app_config *cfg);

#endif
