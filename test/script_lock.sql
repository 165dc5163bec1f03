-- storagelab_internal.script_lock: the locks of a generated script's step,
-- taken one relation at a time within a budget below the server's
-- deadlock_timeout, with a short deadlock_timeout of its own when the role
-- may set it (test/online_lock_order.sh shows that clients are not the ones
-- cancelled; this checks the settings and locks it leaves; that a view is
-- locked by ALTER VIEW ... OWNER TO, without the tables it reads, was checked
-- by hand: a view created in this transaction is locked already).
BEGIN;
SELECT plan(5);

CREATE TABLE sl_a (id int);
CREATE TABLE sl_b (id int);
SET LOCAL lock_timeout = '2s';

SELECT lives_ok($$SELECT storagelab_internal.script_lock(ARRAY['public.sl_a', 'public.sl_b', 'public.sl_missing'], 'SHARE ROW EXCLUSIVE')$$,
                'locks the tables that exist, skips one that does not');
SELECT is((SELECT count(*)::int FROM pg_locks WHERE pid = pg_backend_pid() AND granted AND mode = 'ShareRowExclusiveLock'
             AND relation IN ('sl_a'::regclass, 'sl_b'::regclass)), 2, 'both tables held in the mode asked for');
SELECT is(current_setting('deadlock_timeout'), '100ms', 'deadlock_timeout a tenth of the server''s (1s), for the rest of the transaction');
SELECT is(current_setting('lock_timeout'), '500ms', 'lock_timeout: the budget, the lower of lock_timeout (2s) and half the server''s deadlock_timeout');

SELECT throws_ok($$SELECT storagelab_internal.script_lock(ARRAY['public.sl_a'], 'NO SUCH MODE')$$, '22023', NULL, 'an unknown mode: 22023');

SELECT * FROM finish();
ROLLBACK;
