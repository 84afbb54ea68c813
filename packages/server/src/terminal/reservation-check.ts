/**
 * Whether a user holds a board's reservation right now (docs/terminal.md: an operator opens a
 * terminal only on a board they hold). The reservations service implements it; until it is
 * wired (services.ts), `noReservations` answers no, so only admins open terminals.
 */
export interface ReservationCheck {
  holds(userId: string, boardId: string): Promise<boolean>;
}

export const noReservations: ReservationCheck = {
  holds: async () => false,
};
