// SPDX-License-Identifier: MIT
//
// client.mjs [URL]: a small Node.js program that uses sinew through the
// unmodified @libsql/client package, the way an application would. It
// speaks Hrana over HTTP (`@libsql/client/http`: no native module), so the
// same code runs against libSQL's server or Turso.
//
// It creates a table, inserts rows with positional and named parameters,
// writes several rows atomically with a batch, shows a batch that fails and
// leaves nothing behind, runs an interactive transaction, queries and
// prints rows, and catches the errors a client should expect (LibsqlError
// with a code). Every line it prints is deterministic on a fresh database,
// so run.sh compares the output with expected.txt.
//
// The URL comes from argv[2], else SINEW_URL, else http://127.0.0.1:8080;
// SINEW_AUTH_TOKEN, when set, is sent as the bearer token.

import { createClient, LibsqlError } from "@libsql/client/http";

const url = process.argv[2] ?? process.env.SINEW_URL ?? "http://127.0.0.1:8080";
const db = createClient({ url, authToken: process.env.SINEW_AUTH_TOKEN || undefined });

// One line per row: "id | customer | item | quantity | price".
function printRows(title, rs) {
    console.log(`${title}:`);
    console.log(`  ${rs.columns.join(" | ")}`);
    for (const row of rs.rows) {
        console.log(`  ${rs.columns.map((name) => String(row[name])).join(" | ")}`);
    }
}

// Runs work(), which must fail, and prints the error as the client sees it.
// A LibsqlError carries the server's code (docs/http.md, "Errors").
async function expectError(what, work) {
    try {
        await work();
    } catch (error) {
        if (!(error instanceof LibsqlError)) {
            throw error;
        }
        console.log(`${what}: refused with ${error.code}`);
        return;
    }
    throw new Error(`${what}: succeeded, but it should have failed`);
}

async function main() {
    // DROP first, so the program can run again against the same node.
    await db.execute("DROP TABLE IF EXISTS orders");
    await db.execute(`CREATE TABLE orders(
        id INTEGER PRIMARY KEY,
        customer TEXT NOT NULL,
        item TEXT NOT NULL,
        quantity INTEGER NOT NULL CHECK (quantity > 0),
        price REAL NOT NULL)`);
    console.log("created table orders");

    // Parameters, by position (?) and by name (:name). Never paste values
    // into SQL text.
    let rs = await db.execute({
        sql: "INSERT INTO orders(customer, item, quantity, price) VALUES (?, ?, ?, ?)",
        args: ["ada", "keyboard", 1, 49.5],
    });
    console.log(`inserted order ${rs.lastInsertRowid} (${rs.rowsAffected} row)`);
    rs = await db.execute({
        sql: "INSERT INTO orders(customer, item, quantity, price) " +
            "VALUES (:customer, :item, :quantity, :price)",
        args: { customer: "grace", item: "monitor", quantity: 2, price: 180 },
    });
    console.log(`inserted order ${rs.lastInsertRowid} (${rs.rowsAffected} row)`);

    // A batch runs its statements in one transaction: all or nothing.
    const results = await db.batch([
        { sql: "INSERT INTO orders VALUES (10, ?, ?, ?, ?)", args: ["alan", "mouse", 3, 15.25] },
        { sql: "INSERT INTO orders VALUES (11, ?, ?, ?, ?)", args: ["edsger", "lamp", 1, 30] },
        { sql: "UPDATE orders SET quantity = quantity + 1 WHERE customer = ?", args: ["ada"] },
    ], "write");
    console.log(`batch wrote ${results.map((r) => r.rowsAffected).join(" + ")} rows`);

    // The second statement breaks the CHECK constraint, so the first one's
    // row is rolled back with it.
    await expectError("batch with a bad quantity", () => db.batch([
        { sql: "INSERT INTO orders VALUES (12, 'barbara', 'desk', 1, 250)", args: [] },
        { sql: "INSERT INTO orders VALUES (13, 'barbara', 'chair', 0, 90)", args: [] },
    ], "write"));
    rs = await db.execute("SELECT count(*) AS n FROM orders WHERE id IN (12, 13)");
    console.log(`rows of the failed batch: ${rs.rows[0].n}`);

    // An interactive transaction: read, decide, write, commit.
    const tx = await db.transaction("write");
    try {
        rs = await tx.execute({
            sql: "SELECT quantity FROM orders WHERE customer = ?",
            args: ["grace"],
        });
        const quantity = rs.rows[0].quantity;
        await tx.execute({
            sql: "UPDATE orders SET quantity = ?, price = price * 0.9 WHERE customer = ?",
            args: [quantity * 2, "grace"],
        });
        await tx.commit();
        console.log(`transaction: grace's order doubled from ${quantity} to ${quantity * 2}`);
    } finally {
        tx.close();
    }

    // A transaction that is rolled back leaves no trace.
    const undo = await db.transaction("write");
    try {
        await undo.execute("DELETE FROM orders");
        await undo.rollback();
        console.log("transaction: DELETE rolled back");
    } finally {
        undo.close();
    }

    rs = await db.execute("SELECT id, customer, item, quantity, price FROM orders ORDER BY id");
    printRows("orders", rs);
    rs = await db.execute({
        sql: "SELECT customer, sum(quantity * price) AS total FROM orders " +
            "WHERE price >= ? GROUP BY customer ORDER BY total DESC",
        args: [20],
    });
    printRows("totals of items from 20 up", rs);

    // Errors come back as LibsqlError with the server's code.
    await expectError("a duplicate id", () => db.execute(
        "INSERT INTO orders VALUES (10, 'alan', 'cable', 1, 5)"));
    await expectError("a typo", () => db.execute("SELEC * FROM orders"));
    await expectError("a missing table", () => db.execute("SELECT * FROM invoices"));
}

try {
    await main();
    console.log("done");
} catch (error) {
    console.error(`client.mjs: ${error instanceof Error ? error.stack : error}`);
    process.exitCode = 1;
} finally {
    db.close();
}
