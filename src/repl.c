/* PLACEHOLDER: replaced by the shell owner. */
