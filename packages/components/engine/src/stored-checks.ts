/** A username as auth registers it (3–32 of letters, digits, '_', '.', '-'). */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;
