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
-- a row inserted with a forged hash and id is numbered and chained anyway
INSERT INTO uldp.ledger_data (id, role, function, epsilon, delta, hash)
VALUES (1, 0, 'forged', 0, 0, '\x00');
SELECT id > 1 AS renumbered, hash <> '\x00' AS rehashed FROM uldp.ledger_data WHERE function = 'forged';
SELECT valid, problem FROM uldp.verify_ledger(:'head');

-- a superuser who disables the triggers and rewrites a row breaks the chain
ALTER TABLE uldp.ledger_data DISABLE TRIGGER ledger_append_only;
UPDATE uldp.ledger_data SET epsilon = epsilon + 1 WHERE function = 'forged';
SELECT valid, problem LIKE 'ledger row % does not match the hash chain%' AS chain_broken
FROM uldp.verify_ledger();
UPDATE uldp.ledger_data SET epsilon = epsilon - 1 WHERE function = 'forged';
SELECT valid FROM uldp.verify_ledger();

-- removing the newest rows is caught by the head ...
DELETE FROM uldp.ledger_data WHERE function = 'forged';
SELECT valid, problem FROM uldp.verify_ledger();
-- ... and, if the head is rewritten too, by a head recorded earlier
UPDATE uldp.ledger_head SET id = (SELECT max(id) FROM uldp.ledger_data),
	hash = (SELECT hash FROM uldp.ledger_data ORDER BY id DESC LIMIT 1);
SELECT valid FROM uldp.verify_ledger();
SELECT valid FROM uldp.verify_ledger(:'head');
INSERT INTO uldp.ledger_data (role, function, epsilon, delta) VALUES (0, 'after', 0, 0);
SELECT hash AS head FROM uldp.ledger_head \gset
SELECT valid FROM uldp.verify_ledger(:'head');
ALTER TABLE uldp.ledger_data ENABLE TRIGGER ledger_append_only;

-- budgets that disagree with the ledger are reported
UPDATE uldp.budget_data SET epsilon_spent = epsilon_spent + 1 WHERE role = current_user::regrole;
SELECT valid, problem FROM uldp.verify_ledger();
UPDATE uldp.budget_data SET epsilon_spent = epsilon_spent - 1 WHERE role = current_user::regrole;
SELECT valid FROM uldp.verify_ledger();

-- only administrators verify
CREATE ROLE uldp_ledger_reader;
SET SESSION AUTHORIZATION uldp_ledger_reader;
SELECT valid FROM uldp.verify_ledger();
RESET SESSION AUTHORIZATION;
DROP ROLE uldp_ledger_reader;
