//! `sql`: a SQL job (see `weir_sql::program`): `--arg catalog=<DDL script>`
//! `--arg statement=<INSERT INTO ... | EXECUTE STATEMENT SET ... | SELECT ...>`.

use weir_api::prelude::*;
use weir_api::program::ArgSpec;

/// The program.
pub fn program() -> Program {
    Program {
        name: "sql",
        description: "a SQL job: the statement planned against the catalog's DDL (what `weir sql` submits)",
        args: &[
            ArgSpec {
                name: weir_sql::program::CATALOG_ARG,
                help: "the CREATE TABLE / CREATE VIEW statements in effect, separated by ';'",
            },
            ArgSpec {
                name: weir_sql::program::STATEMENT_ARG,
                help: "INSERT INTO t SELECT ..., EXECUTE STATEMENT SET BEGIN ... END, or SELECT ... (printed as a changelog)",
            },
            ArgSpec {
                name: weir_sql::program::COLLECT_ARG,
                help: "send a SELECT's rows to the JobMaster for the SQL client, in batches of this size (e.g. 2mb; default: print them)",
            },
        ],
        build: weir_sql::program::build,
    }
}
