/* policy_json.c — see policy_json.h. */
#include "server/api/config/policy_json.h"

json_t *srv_config_json(const st_app_config *cfg)
{
	json_t *rules = json_loads(cfg->grouping_rules, 0, NULL);
	return json_pack("{s:f,s:I,s:I,s:o}", "sample_rate", cfg->sample_rate, "daily_quota",
			 (json_int_t)cfg->daily_quota, "retention_days",
			 (json_int_t)cfg->retention_days, "grouping_rules",
			 rules ? rules : json_object());
}
