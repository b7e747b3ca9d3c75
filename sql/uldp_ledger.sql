-- the ledger is append-only and hash-chained; uldp.verify_ledger finds tampering
-- by anyone who can get past the triggers (a superuser)
SELECT valid, entries > 0 AS has_entries, problem FROM uldp.verify_ledger();
SELECT uldp.set_budget(current_user::regrole, 1000, 1e-3);
SELECT hash AS head FROM uldp.ledger_head \gset
SELECT valid, problem FROM uldp.verify_ledger(:'head');

-- every change is refused
UPDATE uldp.ledger_data SET epsilon = 0;
DELETE FROM uldp.ledger_data;
TRUNCATE uldp.ledger_data;
TRUNCATE uldp.ledger_head;
-- a row inserted without a hash is numbered, stamped and chained, whatever
-- id it names; new rows are encoded with version 2 (role name, statement)
INSERT INTO uldp.ledger_data (id, role_oid, role, function, epsilon, delta, statement)
VALUES (1, 10, 'uldp_nobody', 'forged', 0, 0, 'forged statement');
SELECT id > 1 AS renumbered, role_oid IS NULL AS no_oid, hash_version, statement
FROM uldp.ledger_data WHERE function = 'forged';
SELECT valid, problem FROM uldp.verify_ledger(:'head');
-- a row inserted with its hash (as pg_restore does) is kept verbatim and
-- does not move the head; if its hash does not continue the chain,
-- verify_ledger names it
BEGIN;
INSERT INTO uldp.ledger_data (id, role, function, epsilon, delta, statement, hash)
VALUES (1000000, 'uldp_nobody', 'forged', 0, 0, '', '\x00');
SELECT id, hash FROM uldp.ledger_data WHERE id = 1000000;
SELECT valid, problem FROM uldp.verify_ledger();
ROLLBACK;
-- one that continues the chain is reported until the head covers it
BEGIN;
INSERT INTO uldp.ledger_data (id, at, role, function, epsilon, delta, statement, hash)
SELECT 1000000, '2000-01-01 00:00:00+00', 'uldp_nobody', 'restored', 0, 0, 'SELECT 1',
	uldp._ledger_hash_v2(h.hash, 1000000, '2000-01-01 00:00:00+00', 'uldp_nobody', 'restored', 0, 0, 'SELECT 1')
FROM uldp.ledger_head h;
SELECT valid, problem FROM uldp.verify_ledger();
UPDATE uldp.ledger_head SET id = 1000000, hash = (SELECT hash FROM uldp.ledger_data WHERE id = 1000000);
SELECT valid, problem FROM uldp.verify_ledger();
-- the next row uldp writes comes after it
SELECT uldp.set_budget(current_user::regrole, 1000, 1e-3);
SELECT max(id) > 1000000 AS after_restored FROM uldp.ledger_data;
SELECT valid, problem FROM uldp.verify_ledger();
ROLLBACK;
-- a row in the old encoding (version 1, without role name and statement)
-- after version 2 rows is refused by verify_ledger, even with a valid hash
BEGIN;
INSERT INTO uldp.ledger_data (id, at, role_oid, role, function, epsilon, delta, hash_version, hash)
SELECT 1000000, '2000-01-01 00:00:00+00', 10, 'uldp_nobody', 'old', 0, 0, 1,
	uldp._ledger_hash(h.hash, 1000000, '2000-01-01 00:00:00+00', 10, 'old', 0, 0)
FROM uldp.ledger_head h;
UPDATE uldp.ledger_head SET id = 1000000, hash = (SELECT hash FROM uldp.ledger_data WHERE id = 1000000);
SELECT valid, problem FROM uldp.verify_ledger();
ROLLBACK;

-- a superuser who disables the triggers and rewrites a row breaks the chain
ALTER TABLE uldp.ledger_data DISABLE TRIGGER ledger_append_only;
UPDATE uldp.ledger_data SET epsilon = epsilon + 1 WHERE function = 'forged';
SELECT valid, problem LIKE 'ledger row % does not match the hash chain%' AS chain_broken
FROM uldp.verify_ledger();
UPDATE uldp.ledger_data SET epsilon = epsilon - 1 WHERE function = 'forged';
SELECT valid FROM uldp.verify_ledger();
-- the role name and the statement are covered too
UPDATE uldp.ledger_data SET role = 'someone_else' WHERE function = 'forged';
SELECT valid, problem LIKE 'ledger row % does not match the hash chain%' AS chain_broken
FROM uldp.verify_ledger();
UPDATE uldp.ledger_data SET role = 'uldp_nobody' WHERE function = 'forged';
UPDATE uldp.ledger_data SET statement = 'SELECT 2' WHERE function = 'forged';
SELECT valid, problem LIKE 'ledger row % does not match the hash chain%' AS chain_broken
FROM uldp.verify_ledger();
UPDATE uldp.ledger_data SET statement = 'forged statement' WHERE function = 'forged';
SELECT valid FROM uldp.verify_ledger();

-- removing the newest rows is caught by the head ...
DELETE FROM uldp.ledger_data WHERE function = 'forged';
SELECT valid, problem FROM uldp.verify_ledger();
-- ... and, if the head is rewritten too, by a head recorded earlier
UPDATE uldp.ledger_head SET id = (SELECT max(id) FROM uldp.ledger_data),
	hash = (SELECT hash FROM uldp.ledger_data ORDER BY id DESC LIMIT 1);
SELECT valid FROM uldp.verify_ledger();
SELECT valid FROM uldp.verify_ledger(:'head');
INSERT INTO uldp.ledger_data (role, function, epsilon, delta) VALUES ('uldp_nobody', 'after', 0, 0);
SELECT hash AS head FROM uldp.ledger_head \gset
SELECT valid FROM uldp.verify_ledger(:'head');
ALTER TABLE uldp.ledger_data ENABLE TRIGGER ledger_append_only;

-- budgets that disagree with the ledger are reported
UPDATE uldp.budget_data SET epsilon_spent = epsilon_spent + 1 WHERE role = current_user;
SELECT valid, problem FROM uldp.verify_ledger();
UPDATE uldp.budget_data SET epsilon_spent = epsilon_spent - 1 WHERE role = current_user;
SELECT valid FROM uldp.verify_ledger();

-- only administrators verify
CREATE ROLE uldp_ledger_reader;
SET SESSION AUTHORIZATION uldp_ledger_reader;
SELECT valid FROM uldp.verify_ledger();
RESET SESSION AUTHORIZATION;
DROP ROLE uldp_ledger_reader;
