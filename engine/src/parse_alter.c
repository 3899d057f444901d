/* SPDX-License-Identifier: MIT
 *
 * parse_alter.c: ALTER TABLE, following src/parse.y (3.40):
 *
 *   cmd ::= ALTER TABLE fullname RENAME TO nm
 *   cmd ::= ALTER TABLE fullname ADD kwcolumn_opt columnname carglist
 *   cmd ::= ALTER TABLE fullname DROP kwcolumn_opt nm
 *   cmd ::= ALTER TABLE fullname RENAME kwcolumn_opt nm TO nm
 *   fullname ::= nm | nm DOT nm;  kwcolumn_opt ::= COLUMN | .
 *
 * Names are kept as written too: SQLite's messages quote the column
 * token as the user wrote it (sqlite3AlterDropColumn's "no such column:
 * \"%T\""), and RENAME quotes the new name in the schema text when it was
 * written quoted (renameEditSql's bQuote).
 */
#include <string.h>

#include "common.h"
#include "parse_int.h"

/* nm, also as written, and whether its first byte is a quote. */
static int written_nm_parse(struct parser *p, const char **name,
                            const char **text, bool *quoted)
{
    struct token tok = p->tok;
    char *copy;
    int rc = engine__parse_nm(p, name);

    if (rc != 0) {
        return rc;
    }
    if (quoted != NULL) {
        *quoted = strchr("\"'[`", p->sql[tok.offset]) != NULL;
    }
    if (text != NULL) {
        copy = engine__parse_alloc(p, tok.size + 1);
        if (copy == NULL) {
            return COMMON_ENOMEM;
        }
        memcpy(copy, p->sql + tok.offset, tok.size);
        copy[tok.size] = '\0';
        *text = copy;
    }
    return 0;
}

/* fullname: [schema.]table */
static int full_name_parse(struct parser *p, struct ast_alter_table *alter)
{
    int rc = engine__parse_nm(p, &alter->table);

    if (rc == 0 && engine__parse_accept(p, TOKEN_DOT)) {
        alter->schema = alter->table;
        rc = engine__parse_nm(p, &alter->table);
    }
    return rc;
}

static int rename_parse(struct parser *p, struct ast_alter_table *alter)
{
    int rc;

    if (engine__parse_accept(p, TOKEN_TO)) {
        alter->kind = AST_ALTER_RENAME_TABLE;
        return written_nm_parse(p, &alter->new_name, NULL,
                                &alter->new_name_quoted);
    }
    alter->kind = AST_ALTER_RENAME_COLUMN;
    engine__parse_accept(p, TOKEN_COLUMN);
    rc = written_nm_parse(p, &alter->column, &alter->column_text, NULL);
    if (rc == 0) {
        rc = engine__parse_expect(p, TOKEN_TO);
    }
    if (rc == 0) {
        rc = written_nm_parse(p, &alter->new_name, NULL,
                              &alter->new_name_quoted);
    }
    return rc;
}

/* parse.y's ADD COLUMN action takes the text from the column name to the
 * token that ends the statement (';' or the end of the input), and
 * sqlite3AlterFinishAddColumn() cuts the white space off its end: a
 * comment after the definition stays in the table's text, and a "--" one
 * leaves that text "incomplete input" (ddl_alter.c's add_column). */
static size_t column_def_end(const struct parser *p)
{
    size_t end = p->tok.offset;

    while (end > p->prev_end && p->sql[end - 1] != '\0' &&
           strchr(" \t\n\v\f\r", p->sql[end - 1]) != NULL) {
        end--;
    }
    return end;
}

int engine__parse_alter(struct parser *p, struct ast_stmt *stmt)
{
    struct ast_alter_table *alter = &stmt->u.alter_table;
    int rc;

    stmt->kind = AST_STMT_ALTER_TABLE;
    engine__parse_advance(p);
    rc = engine__parse_expect(p, TOKEN_TABLE);
    if (rc == 0) {
        rc = full_name_parse(p, alter);
    }
    if (rc != 0) {
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_RENAME)) {
        return rename_parse(p, alter);
    }
    if (engine__parse_accept(p, TOKEN_ADD)) {
        alter->kind = AST_ALTER_ADD_COLUMN;
        engine__parse_accept(p, TOKEN_COLUMN);
        rc = engine__parse_column_def(p, &alter->column_def);
        alter->column_def_end = column_def_end(p);
        return rc;
    }
    if (engine__parse_accept(p, TOKEN_DROP)) {
        alter->kind = AST_ALTER_DROP_COLUMN;
        engine__parse_accept(p, TOKEN_COLUMN);
        return written_nm_parse(p, &alter->column, &alter->column_text, NULL);
    }
    return engine__parse_syntax_error(p);
}
