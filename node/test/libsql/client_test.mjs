// SPDX-License-Identifier: MIT
//
// client_test.mjs URL: drives a running `sinew serve` with the real
// @libsql/client package (its HTTP flavour, which speaks Hrana v2 over
// `POST /v2/pipeline` and needs no native module), and checks exact values and
// types of everything an application sees: statement results, argument
// binding, batches and their rollback, interactive transactions, error codes
// and bearer-token authentication.
//
// Method: one sequential check after another against a fresh database; each
// prints "ok <name>" and the first failure prints "FAIL <name>: <why>" and
// exits 1. The URL comes from argv[2] or SINEW_URL; SINEW_AUTH_TOKEN, when
// set, is the token the server was started with, and enables the checks that
// a request without it (or with a wrong one) is refused with HTTP 401.
//
// What the client sends is described in /work/shared/reference and in
// hrana-client's source: JS numbers travel as Hrana "float" values, bigints as
// "integer", named arguments without their sigil; integers come back as JS
// numbers unless the client was created with intMode "bigint";
// transaction("read") sends BEGIN TRANSACTION READONLY.

import assert from "node:assert/strict";
import { createClient, LibsqlError } from "@libsql/client/http";

const CHECK_TIMEOUT_MS = 15000;

const url = process.argv[2] ?? process.env.SINEW_URL;
const authToken = process.env.SINEW_AUTH_TOKEN || undefined;
if (!url) {
    console.error("usage: node client_test.mjs URL (or SINEW_URL=URL); SINEW_AUTH_TOKEN optional");
    process.exit(2);
}

const client = createClient({ url, authToken });
const bigClient = createClient({ url, authToken, intMode: "bigint" });
let checkCount = 0;

function withTimeout(promise, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(
            () => reject(new Error(`${what}: no answer within ${CHECK_TIMEOUT_MS} ms`)),
            CHECK_TIMEOUT_MS,
        );
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error) {
    if (!(error instanceof Error)) {
        return String(error);
    }
    let text = `${error.name}: ${error.message}`;
    if (error.code !== undefined) {
        text += ` [code=${error.code}]`;
    }
    if (error.cause instanceof Error) {
        text += ` (cause: ${error.cause.name}: ${error.cause.message})`;
    }
    return text;
}

async function check(name, body) {
    try {
        await withTimeout(Promise.resolve().then(body), name);
    } catch (error) {
        console.log(`FAIL ${name}: ${describe(error)}`);
        if (error instanceof assert.AssertionError) {
            console.log(error.stack.split("\n").find((line) => line.includes("client_test.mjs")) ?? "");
        }
        process.exit(1);
    }
    checkCount++;
    console.log(`ok ${name}`);
}

// rejection(promise) resolves to the error the promise rejects with and fails
// the check if it fulfils instead.
async function rejection(promise) {
    try {
        const value = await promise;
        assert.fail(`expected a rejection, got ${JSON.stringify(value, (_, v) => (typeof v === "bigint" ? `${v}n` : v))}`);
    } catch (error) {
        if (error instanceof assert.AssertionError) {
            throw error;
        }
        return error;
    }
}

function assertLibsqlError(error) {
    assert.ok(error instanceof LibsqlError, `expected a LibsqlError, got ${describe(error)}`);
    assert.equal(typeof error.code, "string", `error code is ${error.code}`);
    assert.notEqual(error.code, "UNKNOWN", "the server sent no error code");
}

function bytesOf(value) {
    assert.ok(value instanceof ArrayBuffer, `expected an ArrayBuffer (blob), got ${typeof value}`);
    return [...new Uint8Array(value)];
}

async function countLog(where) {
    const rs = await client.execute(`SELECT count(*) AS n FROM log WHERE ${where}`);
    return rs.rows[0].n;
}

await check("executeMultiple creates the tables", async () => {
    await client.executeMultiple(`
        DROP TABLE IF EXISTS items;
        DROP TABLE IF EXISTS log;
        CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL, data BLOB, note);
        CREATE TABLE log(id INTEGER PRIMARY KEY, msg TEXT);
    `);
    const rs = await client.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('items', 'log') ORDER BY name",
    );
    assert.deepEqual(rs.columns, ["name"]);
    assert.deepEqual(rs.rows.map((row) => row.name), ["items", "log"]);
});

await check("execute with positional args: numbers, string, blob, null", async () => {
    const rs = await client.execute("INSERT INTO items(name, qty, price, data, note) VALUES (?, ?, ?, ?, ?)", [
        "apple",
        3,
        1.25,
        new Uint8Array([0, 1, 2, 255]),
        null,
    ]);
    assert.equal(rs.rowsAffected, 1);
    assert.equal(typeof rs.lastInsertRowid, "bigint");
    assert.equal(rs.lastInsertRowid, 1n);
    assert.deepEqual(rs.rows, []);
});

await check("execute with a bigint beyond 2^53, unicode text and an empty blob", async () => {
    const rs = await client.execute("INSERT INTO items(id, name, qty, price, data, note) VALUES (?, ?, ?, ?, ?, ?)", [
        7n,
        "h\u00e9llo \u65e5\u672c \u{1F642} 'quoted' \"double\"",
        9007199254740993n,
        -0.5,
        new Uint8Array(0),
        "n",
    ]);
    assert.equal(rs.rowsAffected, 1);
    assert.equal(rs.lastInsertRowid, 7n);
});

await check("select returns column names and typed values", async () => {
    const rs = await client.execute("SELECT id, name, qty, price, data, note FROM items WHERE id = ?", [1]);
    assert.deepEqual(rs.columns, ["id", "name", "qty", "price", "data", "note"]);
    assert.equal(rs.rows.length, 1);
    const row = rs.rows[0];
    assert.equal(row.length, 6);
    assert.equal(row.id, 1);
    assert.equal(row[0], 1);
    assert.equal(row.name, "apple");
    assert.equal(row.qty, 3);
    assert.equal(typeof row.qty, "number");
    assert.equal(row.price, 1.25);
    assert.deepEqual(bytesOf(row.data), [0, 1, 2, 255]);
    assert.equal(row.note, null);
});

await check("SQLite storage classes survive the wire (typeof)", async () => {
    const rs = await client.execute(
        "SELECT typeof(qty), typeof(price), typeof(data), typeof(note), typeof(name) FROM items ORDER BY id",
    );
    assert.deepEqual(
        rs.rows.map((row) => [...Array(row.length).keys()].map((i) => row[i])),
        [
            ["integer", "real", "blob", "null", "text"],
            ["integer", "real", "blob", "text", "text"],
        ],
    );
});

await check("a JS number binds as REAL, a bigint as INTEGER", async () => {
    const rs = await client.execute("SELECT typeof(?) AS a, typeof(?) AS b, ? AS c, ? AS d", [1, 1n, 2.5, -3n]);
    assert.deepEqual(rs.columns, ["a", "b", "c", "d"]);
    const row = rs.rows[0];
    assert.equal(row.a, "real");
    assert.equal(row.b, "integer");
    assert.equal(row.c, 2.5);
    assert.equal(row.d, -3);
});

await check("text, empty blob and negative REAL round-trip exactly", async () => {
    const rs = await client.execute("SELECT name, price, data, length(data) AS n FROM items WHERE id = 7");
    const row = rs.rows[0];
    assert.equal(row.name, "h\u00e9llo \u65e5\u672c \u{1F642} 'quoted' \"double\"");
    assert.equal(row.price, -0.5);
    assert.deepEqual(bytesOf(row.data), []);
    assert.equal(row.n, 0);
});

await check("intMode bigint: integers come back as bigint, exact beyond 2^53", async () => {
    const rs = await bigClient.execute("SELECT id, qty, price, ? AS lo, ? AS hi FROM items ORDER BY id", [
        -9223372036854775808n,
        9223372036854775807n,
    ]);
    assert.deepEqual(rs.columns, ["id", "qty", "price", "lo", "hi"]);
    assert.equal(rs.rows.length, 2);
    const [first, second] = rs.rows;
    assert.equal(typeof first.id, "bigint");
    assert.equal(first.id, 1n);
    assert.equal(first.qty, 3n);
    assert.equal(typeof first.price, "number");
    assert.equal(first.price, 1.25);
    assert.equal(first.lo, -9223372036854775808n);
    assert.equal(first.hi, 9223372036854775807n);
    assert.equal(second.id, 7n);
    assert.equal(second.qty, 9007199254740993n);
});

await check("named args without sigil for :name, @name and $name", async () => {
    for (const sigil of [":", "@", "$"]) {
        const rs = await client.execute({
            sql: `INSERT INTO log(msg) VALUES (${sigil}msg)`,
            args: { msg: `named ${sigil}` },
        });
        assert.equal(rs.rowsAffected, 1, `sigil ${sigil}`);
    }
    const rs = await client.execute("SELECT msg FROM log WHERE msg LIKE 'named %' ORDER BY id");
    assert.deepEqual(rs.rows.map((row) => row.msg), ["named :", "named @", "named $"]);
});

// Hrana 1 spec, "Execute a statement": "the names of arguments include the
// prefix sign (:, @ or $). If the name of the argument does not start with
// this prefix, the server will try to guess the correct prefix." The client
// passes object keys through unchanged, so both forms reach the server.
await check("named args: mixed sigils in one statement, a name used twice, a key with its sigil", async () => {
    const rs = await bigClient.execute({
        sql: "SELECT :a AS a, @b AS b, $c AS c, :a + :a AS twice, :d AS d",
        args: { a: 21n, b: "bee", c: null, ":d": new Uint8Array([9]) },
    });
    const row = rs.rows[0];
    assert.equal(row.a, 21n);
    assert.equal(row.b, "bee");
    assert.equal(row.c, null);
    assert.equal(row.twice, 42n);
    assert.deepEqual(bytesOf(row.d), [9]);
});

await check("rowsAffected and lastInsertRowid of UPDATE, DELETE and INSERT", async () => {
    let rs = await client.execute("UPDATE items SET qty = qty + 1");
    assert.equal(rs.rowsAffected, 2);
    rs = await client.execute("INSERT INTO log(msg) VALUES ('to delete'), ('to delete')");
    assert.equal(rs.rowsAffected, 2);
    assert.equal(rs.lastInsertRowid, 5n);
    rs = await client.execute("DELETE FROM log WHERE msg = 'to delete'");
    assert.equal(rs.rowsAffected, 2);
    rs = await client.execute("SELECT qty FROM items WHERE id = 1");
    assert.equal(rs.rows[0].qty, 4);
});

await check("batch(write): statements in order, a later one sees an earlier one", async () => {
    const results = await client.batch(
        [
            { sql: "INSERT INTO log(id, msg) VALUES (?, ?)", args: [50n, "batch 1"] },
            ["INSERT INTO log(msg) VALUES (?)", ["batch 2"]],
            "SELECT count(*) AS n FROM log WHERE msg LIKE 'batch %'",
        ],
        "write",
    );
    assert.equal(results.length, 3);
    assert.equal(results[0].rowsAffected, 1);
    assert.equal(results[0].lastInsertRowid, 50n);
    assert.equal(results[1].lastInsertRowid, 51n);
    assert.deepEqual(results[2].columns, ["n"]);
    assert.equal(results[2].rows[0].n, 2);
});

await check("batch(write) with a failing statement rejects and applies nothing", async () => {
    const before = await countLog("1");
    const error = await rejection(
        client.batch(
            [
                { sql: "INSERT INTO log(id, msg) VALUES (?, ?)", args: [100n, "rolled back 1"] },
                { sql: "INSERT INTO log(id, msg) VALUES (?, ?)", args: [101n, "rolled back 2"] },
                { sql: "INSERT INTO log(id, msg) VALUES (?, ?)", args: [100n, "duplicate key"] },
            ],
            "write",
        ),
    );
    assertLibsqlError(error);
    assert.ok(error.code.startsWith("SQLITE_CONSTRAINT"), `code ${error.code}`);
    assert.equal(error.statementIndex, 2);
    assert.equal(await countLog("1"), before, "rows of the failed batch were applied");
    assert.equal(await countLog("id IN (100, 101)"), 0, "rows of the failed batch were applied");
});

await check("batch(write) referring to a missing table rejects and applies nothing", async () => {
    const error = await rejection(
        client.batch(["INSERT INTO log(msg) VALUES ('never')", "INSERT INTO no_such_table VALUES (1)"], "write"),
    );
    assertLibsqlError(error);
    assert.ok(error.message.includes("no such table"), error.message);
    assert.equal(await countLog("msg = 'never'"), 0, "a row of the failed batch was applied");
});

await check("transaction(write): sees its own insert, hidden outside until commit", async () => {
    const tx = await client.transaction("write");
    try {
        const inserted = await tx.execute({ sql: "INSERT INTO log(msg) VALUES (?)", args: ["tx committed"] });
        assert.equal(inserted.rowsAffected, 1);
        assert.equal(typeof inserted.lastInsertRowid, "bigint");
        const seen = await tx.execute("SELECT id, msg FROM log WHERE msg = 'tx committed'");
        assert.equal(seen.rows.length, 1);
        assert.equal(BigInt(seen.rows[0].id), inserted.lastInsertRowid);
        assert.equal(await countLog("msg = 'tx committed'"), 0, "an uncommitted row is visible outside");
        await tx.commit();
    } finally {
        tx.close();
    }
    assert.equal(tx.closed, true);
    assert.equal(await countLog("msg = 'tx committed'"), 1, "the committed row is not visible");
});

await check("transaction(write) rolled back leaves nothing", async () => {
    const tx = await client.transaction("write");
    try {
        await tx.execute("INSERT INTO log(msg) VALUES ('tx rolled back')");
        await tx.execute("UPDATE items SET note = 'changed' WHERE id = 1");
        const seen = await tx.execute("SELECT count(*) AS n FROM log WHERE msg = 'tx rolled back'");
        assert.equal(seen.rows[0].n, 1);
        await tx.rollback();
    } finally {
        tx.close();
    }
    assert.equal(await countLog("msg = 'tx rolled back'"), 0, "the rolled-back insert is visible");
    const rs = await client.execute("SELECT note FROM items WHERE id = 1");
    assert.equal(rs.rows[0].note, null, "the rolled-back update is visible");
});

await check("transaction(read): reads, and commits", async () => {
    const expected = await countLog("1");
    const tx = await client.transaction("read");
    try {
        const rs = await tx.execute("SELECT count(*) AS n FROM log");
        assert.equal(rs.rows[0].n, expected);
        await tx.commit();
    } finally {
        tx.close();
    }
});

await check("transaction(read) refuses a write", async () => {
    const tx = await client.transaction("read");
    try {
        await tx.execute("SELECT 1");
        const error = await rejection(tx.execute("INSERT INTO log(msg) VALUES ('read-only write')"));
        assertLibsqlError(error);
        console.log(`   (write in a read transaction: ${describe(error)})`);
        await tx.rollback();
    } finally {
        tx.close();
    }
    assert.equal(await countLog("msg = 'read-only write'"), 0, "a write in a read transaction was applied");
});

await check("no such table: LibsqlError with a code", async () => {
    const error = await rejection(client.execute("SELECT * FROM no_such_table"));
    assertLibsqlError(error);
    assert.ok(error.message.includes("no such table: no_such_table"), error.message);
    console.log(`   (code ${error.code})`);
});

await check("syntax error: LibsqlError with a code", async () => {
    const error = await rejection(client.execute("SELEC 1"));
    assertLibsqlError(error);
    assert.ok(error.message.includes("syntax error"), error.message);
});

await check("constraint violation: code SQLITE_CONSTRAINT", async () => {
    const error = await rejection(client.execute("INSERT INTO items(id, name) VALUES (1, 'again')"));
    assertLibsqlError(error);
    assert.ok(error.code.startsWith("SQLITE_CONSTRAINT"), `code ${error.code}`);
    assert.ok(error.message.includes("UNIQUE constraint failed: items.id"), error.message);
});

await check("the client still works after errors", async () => {
    const rs = await client.execute("SELECT count(*) AS n FROM items");
    assert.equal(rs.rows[0].n, 2);
});

async function pipelineStatus(headers) {
    const response = await fetch(new URL("v2/pipeline", url.endsWith("/") ? url : `${url}/`), {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        // The body the client itself sends for execute("SELECT 1").
        body: JSON.stringify({
            requests: [
                { type: "execute", stmt: { sql: "SELECT 1", args: [], named_args: [], want_rows: true } },
                { type: "close" },
            ],
        }),
    });
    await response.arrayBuffer();
    return response.status;
}

if (authToken === undefined) {
    console.log("skip bearer token checks (SINEW_AUTH_TOKEN not set)");
} else {
    await check("bearer token: the right one is accepted over plain HTTP", async () => {
        assert.equal(await pipelineStatus({ authorization: `Bearer ${authToken}` }), 200);
    });

    await check("bearer token: missing or wrong gets HTTP 401", async () => {
        assert.equal(await pipelineStatus({}), 401, "no authorization header");
        assert.equal(await pipelineStatus({ authorization: `Bearer ${authToken}x` }), 401, "wrong token");
        assert.equal(await pipelineStatus({ authorization: `Basic ${authToken}` }), 401, "not a bearer token");
    });

    // The client reads a non-2xx body only when its content type is exactly
    // application/json and it has a "message": then the status is lost and
    // the body's "code" becomes LibsqlError.code ("UNKNOWN" without one).
    // Any other body (text/plain, or sqld's {"error": ...}) becomes code
    // "SERVER_ERROR" with the status in error.cause.status. Either way an
    // application must be able to tell an authentication failure apart.
    await check("bearer token: a client without it is rejected as unauthenticated", async () => {
        const anonymous = createClient({ url });
        try {
            const error = await rejection(anonymous.execute("SELECT 1"));
            assertLibsqlError(error);
            assert.ok(
                error.cause?.status === 401 || /auth|token/i.test(error.code),
                `neither HTTP status 401 nor an authentication code in ${describe(error)}`,
            );
            console.log(`   (${describe(error)})`);
        } finally {
            anonymous.close();
        }
    });

    await check("bearer token: a client with a wrong one is rejected", async () => {
        const wrong = createClient({ url, authToken: `${authToken}x` });
        try {
            const error = await rejection(wrong.execute("SELECT 1"));
            assert.ok(error instanceof LibsqlError, `expected a LibsqlError, got ${describe(error)}`);
        } finally {
            wrong.close();
        }
    });
}

client.close();
bigClient.close();
console.log(`client_test: all ${checkCount} checks passed`);
