-- alert_group — a group as an alert shows it (SPEC §11.2; docs/ALERTS.md).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Its counts are the group's at the send, all time; "top_frames" are its
-- biggest level-2 subgroup's four innermost frames (a Slack message shows
-- them), its own two when it has none yet.

CREATE OR REPLACE FUNCTION alert_group(p_app bigint, p_key1 text)
-- PL/pgSQL: a SQL body is checked when it is made, and groups_triage's
-- file is applied after this one.
RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT jsonb_build_object(
           'key', g.key, 'culprit', g.culprit, 'frames', g.frames,
           'top_frames', coalesce((SELECT s.frames FROM groups s
                                    WHERE s.app_id = p_app AND s.level = 2
                                      AND s.parent_key = p_key1 AND s.reports > 0
                                    ORDER BY s.reports DESC, s.key LIMIT 1), g.frames),
           'reports', g.reports, 'users', g.users, 'stall_ms', g.stall_ms,
           'first_seen', to_char(g.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'last_seen', to_char(g.last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
           'status', coalesce((SELECT st.status FROM group_status st
                                WHERE st.app_id = p_app AND st.key1 = p_key1), 'open'))
         || coalesce((SELECT tr.triage
                        FROM groups_triage(p_app, 1::smallint, ARRAY[p_key1], NULL, NULL, NULL,
                                           NULL, NULL, NULL) tr), '{}'::jsonb)
    FROM groups g WHERE g.app_id = p_app AND g.level = 1 AND g.key = p_key1);
END $$;
COMMENT ON FUNCTION alert_group(bigint, text) IS
  'Level-1 group P_KEY1 of app P_APP as an alert body shows it: key, culprit, frames, top_frames (its biggest subgroup''s), all-time reports, users, stall_ms, first and last seen, status and the triage members (affected, rate, versions); NULL when there is no such group.';
